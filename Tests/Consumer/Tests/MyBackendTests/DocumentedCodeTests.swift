import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import Foundation
import Testing

/// The code the README and the production checklist show an app writing, compiled here — outside the
/// package, on its public API alone — and held to the documents line for line.
@Suite struct DocumentedCodeTests {
    static let root = URL(fileURLWithPath: #filePath).appendingPathComponent("../../../../..").standardized

    /// The first swift block after `heading` in `document`, without its imports.
    static func block(after heading: String, in document: String) throws -> String {
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        let section = try #require(text.components(separatedBy: heading).dropFirst().first, "no \(heading) in \(document)")
        let code = try #require(section.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "\n```").first)
        return code.components(separatedBy: "\n").filter { !$0.hasPrefix("import ") }.joined(separator: "\n")
            .trimmingCharacters(in: .newlines)
    }

    /// The lines of this file between `// MARKER-BEGIN` and `// MARKER-END`, unindented.
    static func region(_ marker: String) throws -> String {
        let lines = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8).components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// \(marker)-BEGIN") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// \(marker)-END") })
        let body = lines[(begin + 1)..<end]
        let indent = body.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return body.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
    }

    @Test func readmesEmbeddingExampleIsPublicAPI() async throws {
        #expect(try Self.region("EMBEDDING") == Self.block(after: "## Embedding", in: "README.md"))
        let simulator = Simulator(clock: ManualClock())
        let v2Client = V2Client.simulated(simulator)
        let deviceID = "consumer-device"
        let finalURL = "adobepass://ios.app?code=c&state=s&mvpd=acme-cable"
        // EMBEDDING-BEGIN
        final class Session: AccessEnablerDelegate {
            func displayProviderDialog(_ mvpds: [MVPD]) { /* show a picker, then setSelectedProvider(id) */ }
            func navigateToUrl(_ url: String) { /* open a web view; pass its final custom URL to handleExternalURL */ }
            func setAuthenticationStatus(_ status: Int, errorCode: String) { /* 1 = authenticated */ }
            func setToken(_ token: String, forResource resource: String) { /* verify, then play */ }
            func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) { /* show why */ }
            func status(_ report: StatusReport) { /* refusals and notices, e.g. REDIRECT_STATE_MISMATCH */ }
        }

        let delegate = Session()
        let enabler = AccessEnabler(
            backend: v2Client,                            // a V2Client on Adobe Pass (V2Client.simulated(simulator) in tests)
            delegate: delegate,                           // held weakly
            storage: InMemoryTokenStorage(),              // or try FileTokenStorage(folder:), or your own
            environment: .live(deviceID: deviceID),       // wall clock + system CSPRNG
            settings: EngineSettings(domainName: "myservice.example"),  // your domain, sent when a login starts
            platform: nil)                                // a PlatformSSO port when the device has a TV-provider account
        await enabler.setRequestor("my-requestor")        // calls made before it completes are queued
        await enabler.getAuthorization("news-channel")    // logs in first if needed → setToken / tokenRequestFailed
        // … the web view reaches adobepass://ios.app?state=…&mvpd=…
        await enabler.handleExternalURL(finalURL)
        // EMBEDDING-END
        await enabler.whenIdle()
        withExtendedLifetime(delegate) {}
        #expect(await enabler.closeSession() == 0, "every call was answered")
    }

    @Test func theChecklistsDeviceRouteIsPublicAPI() async throws {
        let documented = try Self.block(after: "## One call per device request", in: "Sources/EntitlementEngine/EntitlementEngine.docc/ProductionChecklist.md")
        #expect(try Self.region("ROUTE") == documented)
        let clock = ManualClock()
        let simulator = Simulator(clock: clock)
        let host = SessionHost(
            settings: SessionHostSettings(engine: .simulated), backend: V2Client.simulated(simulator), clock: clock,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
        let requestorID = "sim-requestor"
        // ROUTE-BEGIN
        // POST /devices/{device}/calls — your HTTP framework's route, on any node:
        struct Reply: Encodable {
            struct Provider: Encodable { var id: String, name: String }
            var open: String?, choose: [Provider]?, code: String?, token: String?, resource: String?, answer: String?
        }

        func deviceRequest(device: String, call: EntitlementCall) async -> (status: Int, body: String) {
            let key = SessionKey(deviceID: device, requestorID: requestorID)
            var reply = Reply()
            do {
                switch try await host.interact(call, on: key, within: .seconds(25)) {
                case .openPage(let url): reply.open = url
                case .chooseProvider(let mvpds): reply.choose = mvpds.map { Reply.Provider(id: $0.id, name: $0.displayName) }
                case .showRegistrationCode(let code): reply.code = code
                case .answered(.setToken(let token, let resource)): (reply.token, reply.resource) = (token, resource)
                case .answered(let callback): reply.answer = callback.redactedDescription
                }
            } catch is SessionHostError {
                return (503, #"{"retry":true}"#)  // the host refused: shutting down, or the device's mailbox is full
            } catch {
                return (504, #"{"retry":true}"#)  // the wait ended; the call goes on — ask again
            }
            let json = JSONEncoder()
            json.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (200, String(decoding: (try? json.encode(reply)) ?? Data("{}".utf8), as: UTF8.self))
        }
        // ROUTE-END
        let page = await deviceRequest(device: "tv-3", call: .getAuthentication(forceAuthn: false, data: [:]))
        #expect(page.status == 200 && page.body.hasPrefix(#"{"choose":[{"id":"acme-cable""#), "\(page)")
        _ = await host.shutdown(gracePeriod: .seconds(1))
    }
}
