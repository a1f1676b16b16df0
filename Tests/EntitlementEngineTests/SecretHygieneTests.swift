import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTracing
import Synchronization
import Testing

@Suite("Secrets never reach log lines in clear", .checksExactlyOnce)
struct SecretHygieneTests {
    @Test func noMintedSecretOrStateAppearsInAnyLogLine() async throws {
        let lines = Mutex<[String]>([])
        let session = SimulatedSession(echo: { event in lines.withLock { $0.append(event.redactedDescription) } })
        await session.signIn()
        await session.enabler.getAuthorization("news-channel")
        await session.enabler.checkPreauthorizedResources(["news-channel"])
        _ = await session.collect()
        let logoutURL = try #require(await {
            await session.enabler.logout()
            return await session.collect().lastNavigation
        }())
        await session.enabler.handleExternalURL(try #require(await session.userAgent.follow(logoutURL).appURL))
        _ = await session.collect()

        // Everything secret that existed in this run: what the simulator minted (session codes,
        // media tokens, page ids), plus the flows' states.
        var secrets = await session.simulator.issuedSecrets
        let states = SeededRandomSource(seed: 1 &* 2 &+ 1)  // the deterministic environment's state source for seed 1
        secrets += (0..<2).map { _ in Base64URL.encode(states.bytes(32)) }
        #expect(secrets.count >= 6, "a session code, media tokens, page ids and states: \(secrets.count)")
        let log = lines.withLock { $0 }.joined(separator: "\n")
        #expect(log.contains("handleExternalURL"), "the log does record the calls")
        for secret in secrets {
            #expect(!log.contains(secret), "a secret reached the log: \(Redactor.shorten(secret))")
        }
        await session.expectClean()
    }

    /// Personal data answered to the app (metadata, the user's GUID in tracking data) is concealed in
    /// log lines; the device id is named by its pseudonym.
    @Test func noPersonalDataAppearsInAnyLogLine() async throws {
        let lines = Mutex<[String]>([])
        let session = SimulatedSession(
            deviceID: "planted-device-3141", echo: { event in lines.withLock { $0.append(event.redactedDescription) } })
        await session.signIn()
        for key in ["householdID", "zip", "userID", "upstreamUserID"] { await session.enabler.getMetadata(.userMetadata(key)) }
        await session.enabler.getAuthorization("news-channel")
        let callbacks = await session.collect()
        let guid = try #require(callbacks.compactMap { callback -> String? in
            if case .sendTrackingData(.authorizationDetection, let data) = callback, data.count > 2, !data[2].isEmpty { data[2] } else { nil }
        }.first)
        #expect(callbacks.contains(.setMetadataStatus(.text("hh-alice"), encrypted: false, key: .userMetadata("householdID"))))
        let log = lines.withLock { $0 }.joined(separator: "\n")
        #expect(log.contains("setMetadataStatus"), "the log does record the answers")
        for value in ["hh-alice", "10001", "acme-7f3a", "up-alice", guid, "planted-device-3141"] {
            #expect(!log.contains(value), "personal data reached the log: \(Redactor.shorten(value))")
        }
        await session.expectClean()
    }
}

/// The review's findings: a redirect carrying the real code and state with its names or
/// delimiters percent-encoded, in a fragment, in upper case, nested in another parameter (once or
/// twice encoded) or at the end of a megabyte put them in clear into the debug log, the trace, the
/// transcript or a status message. Each way is delivered here; no output may hold either secret in
/// clear, percent-encoded (once or twice), or in base64 / base64url.
@Suite("Secrets never leak, in any encoding", .checksExactlyOnce)
struct SecretSweepTests {
    enum Delivery: String, CaseIterable, Sendable {
        case encodedNames, fragment, encodedQuestionMark, upperCase, nested, doubleNested, megabyte, jsonInAParameter
    }

    static func craft(_ delivery: Delivery, redirect: String, code: String, state: String) -> String {
        let pairs = "code=\(code)&state=\(state)&mvpd=acme-cable"
        switch delivery {
        case .encodedNames: return "adobepass://ios.app?c%6Fde=\(code)&st%61te=\(state)&mvpd=acme-cable"
        case .fragment: return "adobepass://ios.app#\(pairs)"
        case .encodedQuestionMark: return "adobepass://ios.app%3F\(pairs)"
        case .upperCase: return "adobepass://ios.app?CODE=\(code)&State=\(state)"
        case .nested: return "adobepass://ios.app?continue=" + PercentEncoding.encode("https://x.sim/cb?\(pairs)")
        case .doubleNested:
            return "adobepass://ios.app?continue=" + PercentEncoding.encode("https://x.sim/a?next=" + PercentEncoding.encode(redirect))
        case .megabyte: return "adobepass://ios.app?pad=" + String(repeating: "a", count: 1 << 20) + "&" + pairs
        case .jsonInAParameter: return "adobepass://ios.app?data=" + PercentEncoding.encode("{\"code\":\"\(code)\",\"state\":\"\(state)\"}")
        }
    }

    /// Every way `secret` could be written down.
    static func encodings(of secret: String) -> [String] {
        let once = PercentEncoding.encode(secret)
        return [
            secret, once, PercentEncoding.encode(once), Base64URL.encode(Array(secret.utf8)),
            Base64URL.encode(Array(secret.utf8)).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/"),
        ].filter { $0.count >= 8 }
    }

    @Test(arguments: Delivery.allCases)
    func aRedirectInAnyEncodingLeaksNothing(delivery: Delivery) async throws {
        let lines = Mutex<[String]>([])
        let recorder = TraceRecorder()
        let session = SimulatedSession(recorder: recorder, echo: { event in lines.withLock { $0.append(event.redactedDescription) } })
        let login = await session.startLogin()
        // The session's code is the last segment of the login URL; the redirect carries the state.
        let code = try #require(login.split(separator: "/").last.map(String.init))
        let redirect = await session.redirectURL(from: login)
        let state = try #require(queryValue("state", in: redirect))
        await session.enabler.handleExternalURL(Self.craft(delivery, redirect: redirect, code: code, state: state))
        let callbacks = await session.collect()
        let statuses = callbacks.compactMap { if case .status(let report) = $0 { report.message } else { nil } }
        let outputs = [
            ("debug log", lines.withLock { $0 }.joined(separator: "\n")), ("trace", recorder.trace.text),
            ("transcript", TraceTranscript.render(recorder.trace)), ("status messages", statuses.joined(separator: "\n")),
        ]
        for (name, text) in outputs {
            for secret in [code, state] {
                for written in Self.encodings(of: secret) {
                    #expect(!text.contains(written), "\(delivery): the \(name) holds a secret as \(Redactor.shorten(written))")
                }
            }
            #expect(text.utf8.count < 64 << 10, "\(delivery): the \(name) is not bounded (\(text.utf8.count) bytes)")
        }
        _ = session.ledger.take()
        // Percent-encoded names are the names they encode: that login completes; the others are refused.
        await session.expectClean(pending: delivery == .encodedNames ? [] : [CallID(2), CallID(3)])
    }

    @Test func redactionIsBoundedAndEscapesControls() {
        let huge = "adobepass://ios.app?code=" + String(repeating: "z", count: 1 << 20)
        let redacted = Redactor.redact(huge)
        #expect(redacted.utf8.count < Redactor.maximumLength + 64)
        #expect(redacted.hasSuffix("more bytes)"))
        #expect(Redactor.redact("line\nbreak\u{2028}and\u{202E}bidi") == "line\\u{A}break\\u{2028}and\\u{202E}bidi")
        #expect(Redactor.redact("https://a.b/c?Code=abcdefgh&x=1") == "https://a.b/c?Code=…&x=1")
        #expect(Redactor.redact("https://a.b/c?Code=abcdefghijklmnopq&x=1") == "https://a.b/c?Code=abcd…&x=1")
    }
}

@Suite("Status text is never a channel for secrets", .checksExactlyOnce)
struct StatusTextTests {
    /// An MVPD's (or an attacker's) `error_description` is quoted in the status: it must not carry
    /// a secret into the app's UI or logs (a decoded control character makes the URL refused).
    @Test func anErrorDescriptionCannotCarryASecretOrAControlCharacter() async throws {
        let session = SimulatedSession()
        let login = await session.startLogin()
        let state = try #require(queryValue("state", in: await session.redirectURL(from: login)))
        let description = PercentEncoding.encode("see code=SECRETCODE123 and {\"token\":\"SECRETTOKEN456\"}")
        await session.enabler.handleExternalURL(
            "adobepass://ios.app?error=access_denied&error_description=\(description)&state=\(state)&mvpd=acme-cable")
        let callbacks = await session.collect()
        let messages = callbacks.compactMap { if case .status(let report) = $0 { report.message } else { nil } }
        #expect(callbacks.contains { statusCode($0) == "REDIRECT_PROVIDER_ERROR" }, "the MVPD's error is reported")
        for message in messages {
            #expect(!message.contains("SECRETCODE123") && !message.contains("SECRETTOKEN456"), "\(message)")
            #expect(!message.unicodeScalars.contains { $0.value == 0x2028 }, "\(message)")
        }
        _ = session.ledger.take()
        await session.expectClean()
    }

    /// The review's case: a redirect whose parameter names hide behind a non-ASCII character in an escape.
    @Test func aFormattingCharacterInsideAnEscapeHidesNothing() {
        let redacted = Redactor.redact("adobepass://ios.app?s%257\u{202E}4ate=STATEVALUE1234&c%256\u{200B}Fde=CODEVALUE5678")
        #expect(!redacted.contains("STATEVALUE1234") && !redacted.contains("CODEVALUE5678"), "\(redacted)")
    }
}
