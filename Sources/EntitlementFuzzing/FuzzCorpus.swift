import EntitlementEngine
import EntitlementScenarios
import EntitlementSimulator
import EntitlementTracing
import Foundation

/// The valid inputs the fuzzers start from, made in code (a fuzzer must not depend on where the
/// package's test files are): recorded traces, scenario scripts, and a token file.
enum FuzzCorpus {
    /// Scenario scripts covering calls, expectations, patterns, captures, world actions and blocks.
    static let scenarios: [String] = [
        """
        # Calls made before setRequestor completes are held and run after it.
        ignore sendTrackingData
        allow pending calls
        ! backend holds configuration
        > getSelectedProvider
        > setRequestor sim-requestor
        > checkAuthentication
        > getMetadata DEVICEID
        < nothing
        ! backend releases configuration
        < setRequestorComplete success
        < selectedProvider nil
        < setAuthenticationStatus 0 USER_NOT_AUTHENTICATED_ERROR
        < setMetadataStatus DEVICEID device-1 false
        """,
        """
        ignore sendTrackingData
        set redirect-timeout 90s
        > setRequestor sim-requestor
        < setRequestorComplete success
        > getAuthorization kids-zone
        < displayProviderDialog *
        > setSelectedProvider acme-cable
        < navigateToUrl $login=~"^https://sp\\.sim/"
        ! user logs in as alice with wonderland holding $back
        ! clock advances 30s
        ! attacker delivers $back with state forged
        < status REDIRECT_STATE_MISMATCH error *
        > handleExternalURL $back
        < setAuthenticationStatus 1 ""
        < setToken * kids-zone
        > logout
        < navigateToUrl *
        ! web view follows the logout
        < setAuthenticationStatus 0 USER_NOT_AUTHENTICATED_ERROR
        """,
        """
        world empty
        requestor r mvpds m resources res, other
        mvpd m "M" authn-ttl 1h login-hops 2
        user u password p mvpd m entitled res denies other "No."
        ignore sendTrackingData
        > setRequestor r
        < setRequestorComplete success
        > setSelectedProvider m
        < navigateToUrl *
        ! user logs in as u with p
        < setAuthenticationStatus 1 ""
        > getAuthorization other
        < status Z100 error "No."
        < tokenRequestFailed other USER_NOT_AUTHORIZED_ERROR "No."
        ! clock advances 2h
        > checkAuthentication
        < setAuthenticationStatus 0 USER_NOT_AUTHENTICATED_ERROR
        """,
        // Several engines, backend requests, a held picker, a call from inside a callback, a
        // repeat, an any-order block, a failing save and a restart.
        """
        ignore sendTrackingData
        set platform-sso
        engine other storage main
        engine tablet device tablet-1 storage main synced
        > setRequestor sim-requestor
        ⇢ configuration
        ⇢ partnerSession Apple
        < setRequestorComplete success
        ! app on setAuthenticationStatus will call checkAuthentication
        ! platform user will keep the picker open
        > getAuthentication
        ⇢ partnerSession Apple
        < presentTvProviderDialog $picker=~"^tv-(provider)-1$"
        ! platform user answers sign in as carol
        ⇢ partnerProfile *
        < setAuthenticationStatus 1 ""
        < setAuthenticationStatus 1 ""
        > @other setRequestor sim-requestor
        ⇢ @other configuration
        < @other setRequestorComplete success
        repeat 2 {
          > @other getAuthorization news-channel
          ⇢ @other authorize news-channel
          < @other setToken * news-channel
        }
        ! backend fails authorize with denial nope "No."
        > getAuthorization movies-hd
        ⇢ authorize movies-hd
        < any order {
        <   tokenRequestFailed movies-hd USER_NOT_AUTHORIZED_ERROR "No."
        <   status Z100 error "No."
        < }
        ! @other storage fails saves
        > @other logout
        < @other status STORAGE_WRITE_FAILED ...
        ! engine restarts
        > setRequestor sim-requestor
        ⇢ configuration
        < setRequestorComplete success
        > checkAuthentication
        < setAuthenticationStatus 1 ""
        ! clock advances 1m30s
        """,
    ]

    /// Traces recorded from the scenario scripts (made once per process).
    static let traces = Task<[String], Never> {
        var traces: [String] = []
        for (index, text) in scenarios.enumerated() {
            guard let scenario = try? ScenarioParser.parse(text, file: "corpus-\(index).scenario") else { continue }
            let recorder = TraceRecorder(recordedWith: "entitle fuzz")
            _ = await ScenarioRunner().run(scenario, recorder: recorder)
            traces.append(recorder.trace.text)
        }
        return traces
    }

    /// A token file as `FileTokenStorage` writes it, for `device-1` and `sim-requestor`.
    static let tokenFile: String = {
        let expires = Timestamp(milliseconds: 1_767_312_000_000)
        let tokens = StoredTokens(
            authentication: AuthenticationToken(
                mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "acme-7f3a", expires: expires,
                metadata: ["zip": .list(["10001"]), "householdID": .text("hh-alice")], encryptedMetadata: ["householdID"]),
            selectedProvider: "acme-cable", deviceID: "device-1",
            pendingLogin: PendingLogin(
                mvpdID: "acme-cable", state: "s", code: "CODE1234", deadline: expires, data: ["k": "v"],
                url: "https://sp.sim/api/v2/authenticate/sim-requestor/CODE1234"),
            pendingLogout: PendingLogout(state: "bye", deadline: expires, mvpdID: "acme-cable"))
        // The envelope FileTokenStorage writes: format, device, requestor, version, tokens.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = String(decoding: (try? encoder.encode(tokens)) ?? Data(), as: UTF8.self)
        return "{\"device\":\"device-1\",\"format\":1,\"requestor\":\"sim-requestor\",\"tokens\":\(body),\"version\":3}"
    }()
}
