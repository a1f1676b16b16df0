import EntitlementEngine
import EntitlementHTTP
import EntitlementSimulator
import EntitlementSimulatorServer
import EntitlementSupport

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// `entitle bench serve`: how fast `entitle serve` starts, and whole logins against it from many
/// concurrent clients. A login is what a device's backend and browser do together: an engine on the
/// HTTP backend (`setRequestor`, `getAuthentication`, `setSelectedProvider`), the browser's requests
/// over HTTP (authenticate page, the MVPD's form posted, the redirect chain), then
/// `handleExternalURL` until `setAuthenticationStatus(1)` — about nine requests, each device its own
/// id, the server throttling per device as V2 does.
package struct ServeBenchmark {
    let logins: Int
    let clients: Int

    /// A run of `logins` logins over `clients` connections.
    package init(logins: Int, clients: Int) {
        self.logins = logins
        self.clients = clients
    }

    /// Measures and prints the figures; the exit status (0 when every run completed).
    package func run() async -> Int32 {
        print("entitle bench serve: \(logins) logins from \(clients) concurrent clients (build with -c release for numbers worth quoting)")
        guard let startup = await Self.startupMilliseconds() else {
            print("  entitle serve did not start")
            return 1
        }
        let server: SimulatorServer
        do {
            server = try SimulatorServer(clock: SystemClock())
        } catch {
            print("  cannot serve: \(error)")
            return 1
        }
        // Each device has its own public address, as a backend's devices do: V2 throttles per address.
        let client = V2Client(
            transport: HTTPV2Transport(baseURL: server.url), softwareStatement: SimulatedClientRegistrar.softwareStatement,
            baseURL: server.url, clock: SystemClock(),
            devices: { id in
                let number = Int(id.split(separator: "-").last ?? "") ?? 0
                return V2Device(
                    info: V2DeviceInfo(model: "bench", version: "1", osName: "Linux", osVersion: "6", connectionType: "LAN"),
                    publicAddress: "10.\((number >> 16) & 255).\((number >> 8) & 255).\(number & 255)")
            })
        let browser = LoopbackBrowser()
        let started = ContinuousClock.now
        let next = Counter()
        let results = await withTaskGroup(of: [Result<Duration, LoginFailure>].self) { group in
            for _ in 0..<clients {
                group.addTask {
                    var results: [Result<Duration, LoginFailure>] = []
                    while let index = next.take(below: logins) {
                        results.append(await Self.login(index, client: client, browser: browser))
                    }
                    return results
                }
            }
            var all: [Result<Duration, LoginFailure>] = []
            for await part in group { all += part }
            return all
        }
        let elapsed = ContinuousClock.now - started
        await server.shutdown()
        let times = results.compactMap { try? $0.get() }.sorted()
        let failures = results.compactMap { if case .failure(let why) = $0 { why.description } else { nil } }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        func ms(_ duration: Duration?) -> String {
            guard let duration else { return "-" }
            return String(format: "%.1f ms", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        print("")
        print("| figure | value |")
        print("|---|---|")
        print("| entitle serve: process start to first answer | \(String(format: "%.0f ms", startup)) |")
        print("| logins completed | \(times.count) of \(logins) |")
        print("| errors | \(failures.count) |")
        print("| wall time | \(String(format: "%.2f s", seconds)) |")
        print("| logins per second | \(String(format: "%.0f", Double(times.count) / max(seconds, 0.001))) |")
        print("| login latency p50 / p99 | \(ms(times.isEmpty ? nil : times[times.count / 2])) / \(ms(times.isEmpty ? nil : times[min(times.count - 1, times.count * 99 / 100)])) |")
        for failure in Set(failures).sorted().prefix(5) { print("  failure: \(failure)") }
        return failures.isEmpty && times.count == logins ? 0 : 1
    }

    struct LoginFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// One device's login; its duration or what went wrong.
    static func login(_ index: Int, client: V2Client, browser: LoopbackBrowser) async -> Result<Duration, LoginFailure> {
        let started = ContinuousClock.now
        let ledger = CallLedger()
        let engine = AccessEnabler(
            backend: client,
            environment: EngineEnvironment(clock: SystemClock(), deviceID: "bench-device-\(index)", redirectStateRandom: SystemRandomSource()),
            settings: .simulated, monitor: ledger)
        await engine.setRequestor("sim-requestor")
        await engine.getAuthentication()
        await engine.setSelectedProvider("acme-cable")
        await engine.whenIdle()
        let navigated = ledger.takeIgnoringTracking().compactMap { callback -> String? in
            if case .navigateToUrl(let url) = callback { url } else { nil }
        }
        guard let url = navigated.last else { return .failure(LoginFailure(description: "no navigateToUrl")) }
        let appURL: String
        switch await browser.logIn(at: url, username: "alice", password: "wonderland") {
        case .success(let reached): appURL = reached
        case .failure(let why): return .failure(why)
        }
        await engine.handleExternalURL(appURL)
        await engine.whenIdle()
        let ended = ledger.takeIgnoringTracking()
        guard ended.last == .setAuthenticationStatus(status: 1, errorCode: "") else {
            return .failure(LoginFailure(description: "ended with \(ended.last.map(\.redactedDescription) ?? "nothing")"))
        }
        return .success(ContinuousClock.now - started)
    }

    /// Milliseconds from starting `entitle serve --port 0 --quiet` to its first answered request.
    static func startupMilliseconds() async -> Double? {
        await withCheckedContinuation { done in
            Thread {
                let output = Pipe()
                let started = ContinuousClock.now
                guard let process = try? ChildProcess.spawn(
                    CommandLine.arguments[0], ["serve", "--port", "0", "--quiet"], output: .descriptor(output.fileHandleForWriting.fileDescriptor))
                else { return done.resume(returning: nil) }
                try? output.fileHandleForWriting.close()
                var text = ""
                while !text.contains("\n") {
                    let chunk = output.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                let firstLine = text.split(separator: "\n").first ?? ""
                let url = firstLine.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                var answered = false
                if let url, let target = URL(string: url + "/"), let data = try? Data(contentsOf: target) {
                    answered = String(decoding: data, as: UTF8.self).contains("Entitlement simulator")
                }
                let elapsed = ContinuousClock.now - started
                process.send(SIGTERM)
                _ = process.waitForExit()
                done.resume(
                    returning: answered ? Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15 : nil)
            }.start()
        }
    }
}

/// Hands out login numbers to the clients.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0

    func take(below limit: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard next < limit else { return nil }
        next += 1
        return next - 1
    }
}

/// A browser on loopback HTTP without cookies or JavaScript: follows redirects itself (stopping at
/// the first URL that is not http), fills in and posts the MVPD's login form.
final class LoopbackBrowser: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private var session: URLSession!

    override init() {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// Redirects are the caller's to follow.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) { completionHandler(nil) }

    func logIn(at start: String, username: String, password: String) async -> Result<String, ServeBenchmark.LoginFailure> {
        var request = URLRequest(url: URL(string: start)!)
        var posted = false
        for _ in 0..<20 {
            guard let (data, response) = await load(request) else { return .failure(.init(description: "no answer")) }
            if (300..<400).contains(response.statusCode), let location = response.value(forHTTPHeaderField: "Location") {
                guard location.hasPrefix("http") else { return .success(location) }
                request = URLRequest(url: URL(string: location)!)
                continue
            }
            let page = String(decoding: data, as: UTF8.self)
            guard response.statusCode == 200, !posted, let form = Self.form(page) else {
                return .failure(.init(description: "stopped at HTTP \(response.statusCode)"))
            }
            posted = true
            var fields = form.hidden
            fields["username"] = username
            fields["password"] = password
            fields["action"] = "sign-in"
            request = URLRequest(url: URL(string: form.action)!)
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(FormCoding.encode(fields.map { ($0.key, $0.value) }).utf8)
        }
        return .failure(.init(description: "too many redirects"))
    }

    private func load(_ request: URLRequest) async -> (Data, HTTPURLResponse)? {
        await withCheckedContinuation { done in
            session.dataTask(with: request) { data, response, _ in
                guard let response = response as? HTTPURLResponse else { return done.resume(returning: nil) }
                done.resume(returning: (data ?? Data(), response))
            }.resume()
        }
    }

    /// The form's action and hidden fields (the simulator's own markup: attributes in double quotes).
    static func form(_ html: String) -> (action: String, hidden: [String: String])? {
        func attribute(_ name: String, in tag: Substring) -> String? {
            guard let start = tag.range(of: "\(name)=\"") else { return nil }
            let rest = tag[start.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { return nil }
            return String(rest[..<end]).replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&quot;", with: "\"")
        }
        guard let formTag = html.range(of: "<form ").map({ html[$0.lowerBound...].prefix { $0 != ">" } }),
            let action = attribute("action", in: formTag)
        else { return nil }
        var hidden: [String: String] = [:]
        for line in html.split(separator: "\n") where line.contains("type=\"hidden\"") {
            if let name = attribute("name", in: line), let value = attribute("value", in: line) { hidden[name] = value }
        }
        return (action, hidden)
    }
}
