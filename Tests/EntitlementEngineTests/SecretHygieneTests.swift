import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTracing
import Foundation
import Synchronization
import EntitlementTestSupport
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
    /// The world's user data (user id, upstream user id, household, zip), the tracking GUID made from
    /// them and a planted device id reach no output channel in clear: not the log (the events' own lines
    /// and the telemetry's at debug, with their metadata), not the metrics' dimensions, not the trace or
    /// its transcript, not the files a sealing store writes.
    @Test func noPersonalDataReachesAnyOutputChannel() async throws {
        let device = "planted-device-3141"
        let lines = Mutex<[String]>([])
        let telemetryLines = TelemetryTests.Lines()
        let measurements = TelemetryTests.Measurements()
        let telemetry = EngineTelemetry(
            session: DevicePseudonym.of(device), logger: telemetryLines, metrics: measurements, minimumLevel: .debug)
        let recorder = TraceRecorder()
        let folder = ScratchSpace.path("entitle-personal-")
        let storage = try FileTokenStorage(folder: folder, sealing: TestOnlySealing(key: "fleet-key"))
        let session = SimulatedSession(
            deviceID: device, storage: storage, recorder: recorder,
            echo: { event in
                lines.withLock { $0.append(event.redactedDescription) }
                telemetry.observe(event)
            })
        await session.signIn()
        for key in ["householdID", "zip", "userID", "upstreamUserID"] { await session.enabler.getMetadata(.userMetadata(key)) }
        await session.enabler.getMetadata(.deviceID)
        await session.enabler.getAuthorization("news-channel")
        let callbacks = await session.collect()
        let guid = try #require(callbacks.compactMap { callback -> String? in
            if case .sendTrackingData(.authorizationDetection, let data) = callback, data.count > 2, !data[2].isEmpty { data[2] } else { nil }
        }.first)
        #expect(callbacks.contains(.setMetadataStatus(.text("hh-alice"), encrypted: false, key: .userMetadata("householdID"))))
        #expect(callbacks.contains(.setMetadataStatus(.text(device), encrypted: false, key: .deviceID)))
        let trace = recorder.trace
        var files = ""
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            files += name + "\n" + String(decoding: FileManager.default.contents(atPath: folder + "/" + name) ?? Data(), as: UTF8.self)
        }
        let channels: [(String, String)] = [
            ("log", lines.withLock { $0 }.joined(separator: "\n")),
            ("telemetry log", telemetryLines.lines.withLock { $0 }.map { "\($0.1) \($0.2)" }.joined(separator: "\n")),
            ("metrics", measurements.counters.withLock { $0.keys.joined(separator: "\n") } + measurements.timers.withLock { $0.keys.joined(separator: "\n") }),
            ("trace", trace.text), ("transcript", TraceTranscript.render(trace)), ("store", files),
            ("trace page", TraceView.html(trace, markingDivergence: true)),
        ]
        #expect(channels[0].1.contains("setMetadataStatus") && channels[1].1.contains("setMetadataStatus"), "the logs do record the answers")
        #expect(trace.text.contains("setMetadataStatus") && files.contains("sealed:1:"), "the trace and the store were written")
        for (channel, text) in channels {
            for value in ["hh-alice", "10001", "acme-7f3a", "up-alice", guid, device] {
                #expect(!text.contains(value), "\(channel) holds personal data in clear: \(Redactor.shorten(value))")
            }
        }
        #expect(TraceReplayer().replay(trace).divergence == nil, "a trace with its personal data concealed replays")
        let keeping = TraceRecorder(keepingPersonalData: true)
        let debugging = SimulatedSession(deviceID: device, recorder: keeping)
        await debugging.signIn()
        await debugging.enabler.getMetadata(.userMetadata("householdID"))
        _ = await debugging.collect()
        #expect(keeping.trace.text.contains("hh-alice") && keeping.trace.text.contains(device), "kept for local debugging")
        expectEqual(keeping.trace.header["personalData"], "kept")
        #expect(TraceReplayer().replay(keeping.trace).divergence == nil)
        await session.expectClean()
        await debugging.expectClean()
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
        let page = TraceView.html(recorder.trace, markingDivergence: true)
        for (name, text) in outputs + [("trace page", page)] {
            for secret in [code, state] {
                for written in Self.encodings(of: secret) {
                    #expect(!text.contains(written), "\(delivery): the \(name) holds a secret as \(Redactor.shorten(written))")
                }
            }
        }
        for (name, text) in outputs {
            #expect(text.utf8.count < 64 << 10, "\(delivery): the \(name) is not bounded (\(text.utf8.count) bytes)")
        }
        #expect(page.utf8.count < 256 << 10, "\(delivery): the trace page is not bounded (\(page.utf8.count) bytes)")
        _ = session.ledger.take()
        // Percent-encoded names are the names they encode: that login completes; the others are refused.
        await session.expectClean(pending: delivery == .encodedNames ? [] : [CallID(2), CallID(3)])
    }

    @Test func redactionIsBoundedAndEscapesControls() {
        let huge = "adobepass://ios.app?code=" + String(repeating: "z", count: 1 << 20)
        let redacted = Redactor.redact(huge)
        #expect(redacted.utf8.count < Redactor.maximumLength + 64)
        #expect(redacted.hasSuffix("more bytes)"))
        expectEqual(Redactor.redact("line\nbreak\u{2028}and\u{202E}bidi"), "line\\u{A}break\\u{2028}and\\u{202E}bidi")
        expectEqual(Redactor.redact("https://a.b/c?Code=abcdefgh&x=1"), "https://a.b/c?Code=…&x=1")
        expectEqual(Redactor.redact("https://a.b/c?Code=abcdefghijklmnopq&x=1"), "https://a.b/c?Code=abcd…&x=1")
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

    /// An MVPD that quotes the flow's `state` in its `error_description` prose, under no name: the
    /// engine knows the value and conceals it in the status, the log, the trace and its transcript.
    @Test func aStateEchoedInProseIsConcealedByValue() async throws {
        let lines = Mutex<[String]>([])
        let recorder = TraceRecorder()
        let session = SimulatedSession(recorder: recorder, echo: { event in lines.withLock { $0.append(event.redactedDescription) } })
        let login = await session.startLogin()
        let state = try #require(queryValue("state", in: await session.redirectURL(from: login)))
        let description = PercentEncoding.encode("the request with state \(state) was refused")
        await session.enabler.handleExternalURL(
            "adobepass://ios.app?error=access_denied&error_description=\(description)&state=\(state)&mvpd=acme-cable")
        let callbacks = await session.collect()
        let message = try #require(callbacks.compactMap { if case .status(let report) = $0, report.code == "REDIRECT_PROVIDER_ERROR" { report.message } else { nil } }.first)
        #expect(message.contains("the request with state … was refused"), "the prose is kept, the value is not: \(message)")
        let trace = recorder.trace
        for (channel, text) in [
            ("status", message), ("log", lines.withLock { $0 }.joined(separator: "\n")), ("trace", trace.text),
            ("transcript", TraceTranscript.render(trace)),
        ] {
            #expect(!text.contains(state), "\(channel) holds the state in clear")
        }
        #expect(trace.text.contains("state%20<state#1>%20was"), "the trace names it by its placeholder: \(trace.text)")
        #expect(TraceReplayer().replay(trace).divergence == nil, "and replays")
        _ = session.ledger.take()
        await session.expectClean()
    }

    /// The review's case: a redirect whose parameter names hide behind a non-ASCII character in an escape.
    @Test func aFormattingCharacterInsideAnEscapeHidesNothing() {
        let redacted = Redactor.redact("adobepass://ios.app?s%257\u{202E}4ate=STATEVALUE1234&c%256\u{200B}Fde=CODEVALUE5678")
        #expect(!redacted.contains("STATEVALUE1234") && !redacted.contains("CODEVALUE5678"), "\(redacted)")
    }
}

@Suite("Secrets in any place a server or client writes them")
struct SecretFormsTests {
    /// Forms a request line takes that name no parameter the redaction knew: a path with doubled
    /// slashes, a second screen's code in the path, `sessionid`, an array parameter.
    @Test(arguments: [
        "/api/v2/authenticate//sim-requestor/CODE12345678",
        "/api/v2//authenticate/sim-requestor//CODE12345678?x=1",
        "/activate/CODE12345678",
        "/login?sessionid=CODE12345678",
        "/x?token[]=CODE12345678&token[1]=CODE12345678",
        "/x?a=1&code%5B%5D=CODE12345678",
    ])
    func aSecretInAnyFormIsShortened(target: String) {
        let line = Redactor.redact(target)
        #expect(!line.contains("CODE12345678"), "\(line)")
    }

    @Test func theSecondScreensLastPageAndAPartnerAreNoCodes() {
        expectEqual(Redactor.redact("/activate/done"), "/activate/done")
        expectEqual(Redactor.redact("/api/v2/sessions/sso/apple"), "/api/v2/sessions/sso/apple")
    }

    /// A value found under its name is concealed wherever else the text repeats it, and a trace
    /// numbers the echo as the value itself.
    @Test func aValueFoundByNameIsConcealedWhereverItIsRepeated() {
        let url = "adobepass://ios.app?error=x&error_description=state%20ECHOEDSTATE99%20unknown&state=ECHOEDSTATE99"
        #expect(!Redactor.redact(url).contains("ECHOEDSTATE99"), "\(Redactor.redact(url))")
        var book = SecretBook()
        expectEqual(book.concealURL(url), "adobepass://ios.app?error=x&error_description=state%20<state#1>%20unknown&state=<state#1>")
        expectEqual(Redactor.redact("code=abc and abc"), "code=… and abc", "a short value is not looked for elsewhere")
    }
}
