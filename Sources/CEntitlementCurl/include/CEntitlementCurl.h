// libcurl's multi interface for EntitlementHTTP's transport, loaded at run time.
//
// The process already holds libcurl: FoundationNetworking links `libcurl.so.4`. This shim opens that
// library with dlopen and calls it through the few functions below, so building the package needs
// neither curl's headers nor a link flag, and curl's variadic `curl_easy_setopt` and
// `curl_easy_getinfo` are called from C, where their calling convention is right. The option
// numbers are curl's own, from `curl/curl.h` and `curl/multi.h`; libcurl keeps them (and its ABI)
// stable across `libcurl.so.4`.
#ifndef C_ENTITLEMENT_CURL_H
#define C_ENTITLEMENT_CURL_H

#include <stddef.h>

/// Loads libcurl and initialises it, once per process; 0 when it is ready, -1 when it is not
/// (`entitle_curl_problem` says why).
int entitle_curl_load(void);
/// Why `entitle_curl_load` failed (a static string), or NULL.
const char *entitle_curl_problem(void);

/// A multi handle that keeps at most `per_host` connections open to one host; NULL when curl could not make one.
void *entitle_curl_multi_new(long per_host);
void entitle_curl_multi_free(void *multi);
/// Runs whatever the transfers can do now without waiting; 0 on success.
int entitle_curl_multi_perform(void *multi);
/// Waits up to `timeout_ms` for a transfer's socket, curl's own timers or a wakeup; 0 on success.
int entitle_curl_multi_poll(void *multi, int timeout_ms);
/// Ends a `entitle_curl_multi_poll` wait from another thread at once; 0 on success.
int entitle_curl_multi_wakeup(void *multi);
/// The next ended transfer: 1 with its handle and curl's result code, 0 when none has ended.
int entitle_curl_multi_next_ended(void *multi, void **easy, int *result);
int entitle_curl_multi_add(void *multi, void *easy);
int entitle_curl_multi_remove(void *multi, void *easy);

/// Called with each piece of the body, and with each header line, as they arrive; returns how much
/// it took (less than `size * count` ends the transfer).
typedef size_t (*entitle_curl_receive)(char *bytes, size_t size, size_t count, void *context);

/// One HTTP request as a transfer to add to a multi handle: `method` (GET, POST, DELETE, …) on `url`,
/// with `headers` (one `Name: value` line each, a `Name:` line removes a header curl adds), `body`
/// when `body_length` is positive (copied), ending after `timeout_ms` in all, refusing a body
/// declared larger than `body_limit`, following no redirect, speaking only http and https, and
/// calling `on_body` and `on_header` with `context`. NULL when curl refused an option.
void *entitle_curl_request_new(
    const char *method, const char *url, const char *const *headers, int header_count, const void *body,
    long body_length, long timeout_ms, long long body_limit, entitle_curl_receive on_body, entitle_curl_receive on_header,
    void *context);
/// Frees a transfer made by `entitle_curl_request_new` (removed from its multi handle first).
void entitle_curl_request_free(void *easy);
/// The last HTTP status the transfer received (0 when none).
long entitle_curl_request_status(void *easy);

#endif
