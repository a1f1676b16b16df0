#include "CEntitlementCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

// curl's option and code numbers (curl/curl.h, curl/multi.h of libcurl 7.88; stable across libcurl.so.4).
enum {
    OPT_WRITEDATA = 10001,
    OPT_URL = 10002,
    OPT_WRITEFUNCTION = 20011,
    OPT_HTTPHEADER = 10023,
    OPT_HEADERDATA = 10029,
    OPT_CUSTOMREQUEST = 10036,
    OPT_NOBODY = 44,
    OPT_POST = 47,
    OPT_FOLLOWLOCATION = 52,
    OPT_HEADERFUNCTION = 20079,
    OPT_HTTPGET = 80,
    OPT_CAPATH = 10097,
    OPT_NOSIGNAL = 99,
    OPT_PRIVATE = 10103,
    OPT_MAXFILESIZE_LARGE = 30117,
    OPT_POSTFIELDSIZE_LARGE = 30120,
    OPT_TIMEOUT_MS = 155,
    OPT_COPYPOSTFIELDS = 10165,
    OPT_PROTOCOLS = 181,
    OPT_PROTOCOLS_STR = 10318,
    PROTOCOL_HTTP = 1 << 0,
    PROTOCOL_HTTPS = 1 << 1,
    INFO_RESPONSE_CODE = 0x200000 + 2,
    INFO_PRIVATE = 0x100000 + 21,
    MULTI_MAX_HOST_CONNECTIONS = 7,
    MESSAGE_DONE = 1,
    GLOBAL_ALL = 3,
};

// A finished transfer's message, laid out as curl's `struct CURLMsg`.
struct ended_message {
    int message;
    void *easy;
    union {
        void *whatever;
        int result;
    } data;
};

struct curl_functions {
    int (*global_init)(long flags);
    void *(*easy_init)(void);
    void (*easy_cleanup)(void *easy);
    int (*easy_setopt)(void *easy, int option, ...);
    int (*easy_getinfo)(void *easy, int info, ...);
    void *(*multi_init)(void);
    int (*multi_cleanup)(void *multi);
    int (*multi_setopt)(void *multi, int option, ...);
    int (*multi_add_handle)(void *multi, void *easy);
    int (*multi_remove_handle)(void *multi, void *easy);
    int (*multi_perform)(void *multi, int *running);
    int (*multi_poll)(void *multi, void *extra, unsigned count, int timeout_ms, int *ready);
    int (*multi_wakeup)(void *multi);
    struct ended_message *(*multi_info_read)(void *multi, int *left);
    void *(*slist_append)(void *list, const char *line);
    void (*slist_free_all)(void *list);
};

static struct curl_functions curl;
static const char *problem = "libcurl is not loaded";
static int loaded = -1;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define FIND(field, name)                                   \
    do {                                                    \
        *(void **)(&curl.field) = dlsym(library, name);     \
        if (curl.field == NULL) {                           \
            problem = "libcurl lacks " name " (7.68 or later is needed)"; \
            return;                                         \
        }                                                   \
    } while (0)

static void load(void) {
#if defined(__APPLE__)
    void *library = dlopen("libcurl.4.dylib", RTLD_NOW | RTLD_LOCAL);
#else
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
#endif
    if (library == NULL) {
        problem = "libcurl.so.4 could not be opened";
        return;
    }
    FIND(global_init, "curl_global_init");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(multi_init, "curl_multi_init");
    FIND(multi_cleanup, "curl_multi_cleanup");
    FIND(multi_setopt, "curl_multi_setopt");
    FIND(multi_add_handle, "curl_multi_add_handle");
    FIND(multi_remove_handle, "curl_multi_remove_handle");
    FIND(multi_perform, "curl_multi_perform");
    FIND(multi_poll, "curl_multi_poll");
    FIND(multi_wakeup, "curl_multi_wakeup");
    FIND(multi_info_read, "curl_multi_info_read");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
    if (curl.global_init(GLOBAL_ALL) != 0) {
        problem = "curl_global_init failed";
        return;
    }
    problem = NULL;
    loaded = 0;
}

int entitle_curl_load(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *entitle_curl_problem(void) { return problem; }

void *entitle_curl_multi_new(long per_host) {
    if (entitle_curl_load() != 0) return NULL;
    void *multi = curl.multi_init();
    if (multi != NULL && curl.multi_setopt(multi, MULTI_MAX_HOST_CONNECTIONS, per_host) != 0) {
        curl.multi_cleanup(multi);
        return NULL;
    }
    return multi;
}

void entitle_curl_multi_free(void *multi) { curl.multi_cleanup(multi); }

int entitle_curl_multi_perform(void *multi) {
    int running = 0;
    return curl.multi_perform(multi, &running);
}

int entitle_curl_multi_poll(void *multi, int timeout_ms) { return curl.multi_poll(multi, NULL, 0, timeout_ms, NULL); }

int entitle_curl_multi_wakeup(void *multi) { return curl.multi_wakeup(multi); }

int entitle_curl_multi_next_ended(void *multi, void **easy, int *result) {
    int left = 0;
    struct ended_message *message;
    while ((message = curl.multi_info_read(multi, &left)) != NULL) {
        if (message->message != MESSAGE_DONE) continue;
        *easy = message->easy;
        *result = message->data.result;
        return 1;
    }
    return 0;
}

int entitle_curl_multi_add(void *multi, void *easy) { return curl.multi_add_handle(multi, easy); }

int entitle_curl_multi_remove(void *multi, void *easy) { return curl.multi_remove_handle(multi, easy); }

void *entitle_curl_request_new(
    const char *method, const char *url, const char *const *headers, int header_count, const void *body,
    long body_length, long timeout_ms, long long body_limit, entitle_curl_receive on_body, entitle_curl_receive on_header,
    void *context) {
    if (entitle_curl_load() != 0) return NULL;
    void *easy = curl.easy_init();
    if (easy == NULL) return NULL;
    void *list = NULL;
    int refused = 0;
    for (int index = 0; index < header_count && refused == 0; index++) {
        void *longer = curl.slist_append(list, headers[index]);
        if (longer == NULL) refused = 1;
        else list = longer;
    }
    // The header list goes with the transfer and is freed with it (entitle_curl_request_free).
    refused |= curl.easy_setopt(easy, OPT_PRIVATE, list);
    refused |= curl.easy_setopt(easy, OPT_HTTPHEADER, list);
    refused |= curl.easy_setopt(easy, OPT_URL, url);
    // Only http and https: by name since curl 7.85, by the older bit mask before.
    if (curl.easy_setopt(easy, OPT_PROTOCOLS_STR, "http,https") != 0) {
        refused |= curl.easy_setopt(easy, OPT_PROTOCOLS, (long)(PROTOCOL_HTTP | PROTOCOL_HTTPS));
    }
    refused |= curl.easy_setopt(easy, OPT_NOSIGNAL, 1L);
    // Trust the system's bundle alone (update-ca-certificates writes every trusted authority into it):
    // without a certificate folder as well, curl keeps the parsed bundle in the multi handle for every
    // handshake instead of reading and parsing it again for each connection.
    refused |= curl.easy_setopt(easy, OPT_CAPATH, (const char *)NULL);
    refused |= curl.easy_setopt(easy, OPT_FOLLOWLOCATION, 0L);
    refused |= curl.easy_setopt(easy, OPT_TIMEOUT_MS, timeout_ms);
    refused |= curl.easy_setopt(easy, OPT_MAXFILESIZE_LARGE, (long long)body_limit);
    refused |= curl.easy_setopt(easy, OPT_WRITEFUNCTION, on_body);
    refused |= curl.easy_setopt(easy, OPT_WRITEDATA, context);
    refused |= curl.easy_setopt(easy, OPT_HEADERFUNCTION, on_header);
    refused |= curl.easy_setopt(easy, OPT_HEADERDATA, context);
    if (body_length > 0 || strcmp(method, "POST") == 0) {
        refused |= curl.easy_setopt(easy, OPT_POST, 1L);
        refused |= curl.easy_setopt(easy, OPT_POSTFIELDSIZE_LARGE, (long long)(body_length > 0 ? body_length : 0));
        refused |= curl.easy_setopt(easy, OPT_COPYPOSTFIELDS, body_length > 0 ? body : "");
    } else if (strcmp(method, "HEAD") == 0) {
        refused |= curl.easy_setopt(easy, OPT_NOBODY, 1L);
    } else {
        refused |= curl.easy_setopt(easy, OPT_HTTPGET, 1L);
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0 && strcmp(method, "HEAD") != 0) {
        refused |= curl.easy_setopt(easy, OPT_CUSTOMREQUEST, method);
    }
    if (refused == 0) return easy;
    curl.easy_cleanup(easy);
    curl.slist_free_all(list);
    return NULL;
}

void entitle_curl_request_free(void *easy) {
    void *list = NULL;
    curl.easy_getinfo(easy, INFO_PRIVATE, &list);
    curl.easy_cleanup(easy);
    curl.slist_free_all(list);
}

long entitle_curl_request_status(void *easy) {
    long status = 0;
    if (curl.easy_getinfo(easy, INFO_RESPONSE_CODE, &status) != 0) return 0;
    return status;
}
