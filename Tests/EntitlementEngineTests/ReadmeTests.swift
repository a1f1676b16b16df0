import EntitlementEngine
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

/// README.md's embedding example is compiled and run here, and must stay identical to the README.
@Suite("README stays true")
struct ReadmeTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The lines between the markers in this file, with the common indentation removed.
    static func markedRegion() throws -> String {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// README-EMBEDDING-BEGIN") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// README-EMBEDDING-END") })
        let region = lines[(begin + 1)..<end]
        let indent = region.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return region.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
    }

    /// README lists the whole delegate protocol, signature for signature (a mistyped method compiles
    /// against the protocol's defaults and is never called, so the list must be exact).
    @Test func theDelegateSignaturesAreTheProtocols() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Embedding").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").first { $0.hasPrefix("func setRequestorComplete") })
        let listed = block.components(separatedBy: "\n```")[0].split(separator: "\n").map(String.init)
        let source = try String(
            contentsOf: Self.packageRoot.appendingPathComponent("Sources/EntitlementEngine/AccessEnablerDelegate.swift"), encoding: .utf8)
        let protocolBody = try #require(source.components(separatedBy: "public protocol AccessEnablerDelegate").dropFirst().first)
            .components(separatedBy: "\n}")[0]
        let required = protocolBody.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("func ") }
        expectEqual(listed, required, "README's list: \(listed)\nthe protocol: \(required)")
    }

    /// The first swift block after "## Embedding" in README.md.
    static func readmeExample() throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Embedding").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").dropFirst().first)
        let code = try #require(block.components(separatedBy: "\n```").first)
        return code.replacingOccurrences(of: "import EntitlementEngine\n\n", with: "")
    }

    @Test func theEmbeddingExampleIsTheCodeThisTestRuns() throws {
        try expectEqual(Self.readmeExample(), Self.markedRegion())
    }

    @Test func theEmbeddingExampleRuns() async throws {
        let simulator = Simulator(clock: ManualClock())
        let v2Client = V2Client.simulated(simulator)
        let deviceID = "readme-device"
        let finalURL = "adobepass://ios.app?code=c&state=s&mvpd=acme-cable"
        // README's engine with one change the region does not show: backend requests may take ten minutes, not the
        // default 30 s on the wall clock. The suite runs all at once on two cores, and a configuration has waited
        // tens of seconds for a thread there; a bound far from the behaviour, as everywhere in the suite. The
        // region below is README's, word for word.
        func AccessEnabler(
            backend: V2Client, delegate: Session, storage: InMemoryTokenStorage, environment: EngineEnvironment, settings: EngineSettings,
            platform: (any PlatformSSO)?
        ) -> EntitlementEngine.AccessEnabler {
            var patient = settings
            patient.requestTimeout = .seconds(600)
            return EntitlementEngine.AccessEnabler(
                backend: backend, delegate: delegate, storage: storage, environment: environment, settings: patient, platform: platform)
        }
        // README-EMBEDDING-BEGIN
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
        // README-EMBEDDING-END
        await enabler.whenIdle()
        withExtendedLifetime(delegate) {}
        // "my-requestor" is not in the simulated world: the configuration failed and the held calls were answered.
        let machine = await enabler.machineSnapshot
        guard case .failed(let requestorID, let error, _) = machine.configuration else {
            Issue.record("not failed: \(machine.configuration)")
            return
        }
        expectEqual(requestorID, "my-requestor")
        expectEqual(error, .httpStatus(400, "invalid_parameter_service_provider: The service provider 'my-requestor' is not known."))
        #expect(machine.queue.isEmpty && machine.authorizations.isEmpty)
    }
}
