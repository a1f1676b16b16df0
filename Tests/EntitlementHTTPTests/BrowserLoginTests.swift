import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSimulatorServer
import EntitlementSupport
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// Headless Chromium, driven by `Tests/Browser/browse.py` (Debian's chromium, chromium-driver and
/// python3-selenium; `.ci/run` installs them and sets `ENTITLE_REQUIRE_BROWSER=1`, so there a missing
/// browser fails the tests instead of skipping them).
enum Browser {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Browser/browse.py").path

    static var installed: Bool {
        let files = FileManager.default
        return files.isExecutableFile(atPath: "/usr/bin/chromium") && files.isExecutableFile(atPath: "/usr/bin/chromedriver")
            && files.fileExists(atPath: "/usr/lib/python3/dist-packages/selenium")
    }

    static var required: Bool { ProcessInfo.processInfo.environment["ENTITLE_REQUIRE_BROWSER"] == "1" }

    /// Where the browser stopped.
    struct Stop: Sendable {
        let url: String
        let message: String?
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs the script with `arguments` and returns where the browser stopped.
    static func run(_ arguments: [String]) async throws -> Stop {
        let json = try await answer(arguments)
        guard let url = json["url"]?.string else { throw Failure(description: "browse.py gave no url: \(json.canonicalText)") }
        return Stop(url: url, message: json["message"]?.string)
    }

    /// One browser at a time in the whole test process, whichever suite asks: two at once on a 2-core
    /// machine starve the loopback servers the other tests wait on. Taken on the script's own thread,
    /// never on Swift concurrency's.
    private static let turn = NSLock()

    /// Runs the script with `arguments` on a thread of its own (it blocks for seconds) and returns the
    /// JSON object it printed.
    static func answer(_ arguments: [String]) async throws -> JSONValue {
        let (status, output, errors) = await withCheckedContinuation { (done: CheckedContinuation<(Int32, String, String), Never>) in
            Thread {
                turn.lock()
                defer { turn.unlock() }
                do {
                    let browse = try ChildProcess.run("/usr/bin/python3", [script] + arguments)
                    done.resume(returning: (
                        browse.termination.status, String(decoding: browse.output, as: UTF8.self), String(decoding: browse.errors, as: UTF8.self)))
                } catch {
                    done.resume(returning: (-1, "", "\(error)"))
                }
            }.start()
        }
        guard status == 0, let json = try? JSONReader.read(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure(description: "browse.py exited \(status): \(output) \(errors.suffix(2000))")
        }
        return json
    }
}

/// The app's side of a redirect: an http loopback URL (a browser cannot navigate to a custom
/// scheme) that records every `/done` URL it receives and shows "back in the app".
final class RedirectCatcher: Sendable {
    let server: HTTPServer

    init() throws {
        let listener = try HTTPListener()
        let url = listener.url
        let received = Received()
        server = try HTTPServer(listener: listener) { request in
            guard request.path == "/done" else { return .text(404, "Not found.") }  // the browser asks for /favicon.ico too
            received.add(url + request.target)
            return .html(200, "<!DOCTYPE html><title>Back in the app</title><h1>Back in the app</h1>")
        }
        self.log = received
    }

    private let log: Received

    final class Received: Sendable {
        private let urls = Mutex<[String]>([])
        func add(_ url: String) { urls.withLock { $0.append(url) } }
        var all: [String] { urls.withLock { $0 } }
    }

    var url: String { server.url }
    var urls: [String] { log.all }
}

@Suite(
    "A real browser logs in and out on the simulator's pages", .serialized,
    .enabled(if: Browser.installed || Browser.required, "needs chromium, chromium-driver and python3-selenium (.ci/run installs them)"))
struct BrowserLoginTests {
    /// An engine on the HTTP backend, the simulator served (pages included) on loopback.
    struct Rig {
        let clock = ManualClock()
        let server: SimulatorServer
        let catcher: RedirectCatcher
        let session: SimulatedSession

        init(secondScreen: Bool = false) throws {
            catcher = try RedirectCatcher()
            server = try SimulatorServer(clock: clock, throttles: false)
            var settings = EngineSettings(redirectURL: catcher.url + "/done")
            if secondScreen { settings.secondScreen = SecondScreen() }
            session = SimulatedSession(
                settings: settings, clock: clock, simulator: server.simulator,
                backend: V2Client(
                    transport: HTTPV2Transport(baseURL: server.url), softwareStatement: SimulatedClientRegistrar.softwareStatement,
                    baseURL: server.url, clock: clock))
        }

        func callbacks() async -> [Callback] {
            await session.enabler.whenIdle()
            return session.ledger.takeIgnoringTracking()
        }

        /// Configured, provider chosen: the login URL the engine navigates to.
        func loginURL() async throws -> String {
            await session.enabler.setRequestor("sim-requestor")
            await expectEqual(callbacks(), [.setRequestorComplete(success: true)])
            await session.enabler.getAuthentication()
            await session.enabler.setSelectedProvider("acme-cable")
            let navigated = await callbacks().compactMap { callback -> String? in
                if case .navigateToUrl(let url) = callback { url } else { nil }
            }
            return try #require(navigated.last)
        }

        func stop() async {
            await session.enabler.whenIdle()
            await server.shutdown()
            await catcher.server.shutdown()
        }
    }

    @Test func aBrowserSignsInGetsAVerifiableMediaTokenAndSignsOut() async throws {
        let rig = try Rig()
        let login = try await rig.loginURL()
        #expect(login.hasPrefix(rig.server.url + "/api/v2/authenticate/sim-requestor/"))

        let signedIn = try await Browser.run(["login", login, "alice", "wonderland", rig.catcher.url])
        #expect(signedIn.url.hasPrefix(rig.catcher.url + "/done?"), "the redirect chain ended at the app: \(signedIn.url)")
        let redirect = try #require(rig.catcher.urls.last, "the app received the redirect")
        expectEqual(redirect, signedIn.url)
        let handled = await rig.session.enabler.handleExternalURL(redirect)
        await expectEqual(rig.callbacks(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        expectEqual(rig.session.ledger.answers(to: handled), [.setAuthenticationStatus(status: 1, errorCode: "")])

        await rig.session.enabler.getAuthorization("sports-live")
        guard case .setToken(let token, let resource) = await rig.callbacks().last else {
            Issue.record("no media token")
            return
        }
        expectEqual(resource, "sports-live")
        let verifier = MediaTokenVerifier(key: await rig.server.simulator.world.mediaTokenKey, clock: rig.clock)
        expectEqual(verifier.verify(token, resource: "sports-live", requestor: "sim-requestor"), .valid)

        await rig.session.enabler.logout()
        let logoutURL = try #require(
            await rig.callbacks().compactMap { callback -> String? in
                if case .navigateToUrl(let url) = callback { url } else { nil }
            }.last, "an interactive logout opens the MVPD's logout page")
        let signedOut = try await Browser.run(["follow", logoutURL, rig.catcher.url])
        #expect(signedOut.url.hasPrefix(rig.catcher.url + "/done"))
        await rig.session.enabler.handleExternalURL(try #require(rig.catcher.urls.last))
        await expectEqual(rig.callbacks().last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        await rig.session.enabler.checkAuthentication()
        await expectEqual(rig.callbacks(), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        #expect(rig.session.ledger.violations().isEmpty, "\(rig.session.ledger.violations())")
        await rig.stop()
    }

    @Test func aWrongPasswordShowsTheMVPDsErrorAndChangesNothing() async throws {
        let rig = try Rig()
        let login = try await rig.loginURL()
        let before = String(describing: await rig.session.enabler.machineSnapshot)
        let stopped = try await Browser.run(["login", login, "alice", "not-her-password", rig.catcher.url])
        expectEqual(stopped.message, "Invalid username or password.")
        #expect(stopped.url.hasPrefix(rig.server.url + "/mvpd/acme-cable/login"), "still on the MVPD's page: \(stopped.url)")
        #expect(rig.catcher.urls.isEmpty, "nothing reached the app")
        await expectEqual(rig.callbacks(), [], "the engine saw nothing")
        expectEqual(String(describing: await rig.session.enabler.machineSnapshot), before, "and nothing changed in it")
        await rig.stop()
    }

    @Test func aTVShowsACodeAndASecondScreenSignsInOnTheActivationPage() async throws {
        let rig = try Rig(secondScreen: true)
        await rig.session.enabler.setRequestor("sim-requestor")
        await expectEqual(rig.callbacks(), [.setRequestorComplete(success: true)])
        await rig.session.enabler.getAuthentication()
        await rig.session.enabler.setSelectedProvider("acme-cable")
        let shown = await rig.callbacks().compactMap { callback -> String? in
            if case .status(let report) = callback, report.code == "REGCODE" { report.message } else { nil }
        }
        let code = try #require(shown.first, "the TV shows a registration code")
        let activation = rig.server.url + "/activate"
        let signedIn = try await Browser.run(["activate", activation, code, "alice", "wonderland"])
        expectEqual(signedIn.message, "Return to your TV.", "the phone's browser ends on the signed-in page: \(signedIn)")
        // The TV polls on its (manual) clock; the next poll finds the profile.
        await rig.clock.advance(by: SecondScreen().pollInterval)
        await expectEqual(rig.callbacks().last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await rig.stop()
    }
}
