import EntitlementSimulator
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

/// `entitle serve` as a process: it prints its URL and users, answers README's curl examples,
/// logs one line per request with secrets shortened, and stops cleanly on SIGTERM.
@Suite("entitle serve, the process")
struct ServeCommandTests {
    static var entitle: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("entitle") }

    /// Runs a shell command on a thread of its own; its standard output.
    static func shell(_ command: String) async -> (status: Int32, output: String) {
        await withCheckedContinuation { done in
            Thread {
                guard let shell = try? ChildProcess.run("/bin/sh", ["-c", command]) else { return done.resume(returning: (-1, "")) }
                done.resume(returning: (shell.termination.status, String(decoding: shell.output, as: UTF8.self)))
            }.start()
        }
    }

    /// The second `sh` block after "## Run the simulator as a server" in README.md.
    static func readmeCurlExample() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Run the simulator as a server").dropFirst().first)
        let blocks = section.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
        return try #require(blocks.dropFirst().first) + "\n"
    }

    @Test func startsAnswersReadmesCurlExamplesAndStopsOnSIGTERM() async throws {
        let log = ScratchSpace.path("entitle-serve-", ending: ".log")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let server = try ChildProcess.spawn(Self.entitle.path, ["serve", "--port", "0"], output: .file(log))
        var url = ""
        for _ in 0..<300 where url.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            url = text.split(separator: "\n").first.flatMap { $0.split(separator: " ").last }.map(String.init) ?? ""
        }
        #expect(url.hasPrefix("http://127.0.0.1:"))
        let banner = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(banner.contains("alice / wonderland / acme-cable"), "the world's users are printed")

        // README's curl walk-through, verbatim apart from the URL.
        let walkThrough = try Self.readmeCurlExample()
        #expect(walkThrough.hasPrefix("URL=http://127.0.0.1:8080\n"))
        let script = "set -e\nURL=\(url)\n" + walkThrough.dropFirst("URL=http://127.0.0.1:8080\n".count)
        let (status, output) = await Self.shell(script)
        expectEqual(status, 0)
        #expect(output.hasPrefix("{\"requestor\":{"), "configuration: \(output)")
        #expect(output.contains("\"actionName\":\"authenticate\""), "session: \(output)")

        server.send(SIGTERM)
        let exited = await withCheckedContinuation { done in
            Thread { done.resume(returning: server.waitForExit()) }.start()
        }
        expectEqual(exited, .exited(0), "a clean stop")
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("SIGTERM: stopping") && text.hasSuffix("entitle serve: stopped\n"))
        let access = text.split(separator: "\n").filter { $0.hasPrefix("127.0.0.1 \"") }
        expectEqual(access.count, 4, "one access-log line per request: \(access)")
        #expect(access.contains { $0.contains("\"POST /api/v2/sim-requestor/sessions\" 200") })
        #expect(!text.contains("secret."), "no client secret in the log")
    }

    @Test func aWorldWithProvidersPrintsTheirURLsAndServesThem() async throws {
        let folder = ScratchSpace.path("entitle-serve-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let world = """
            provider mag subscription
            subscriber bob password pw of mag issues issue-7
            provider kids server grants toon-1 pin "1111" protects scary-1
            """
        try world.write(toFile: folder + "/world", atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: folder + "/log", contents: nil)
        let server = try ChildProcess.spawn(
            Self.entitle.path, ["serve", "--port", "0", "--quiet", "--world", folder + "/world"], output: .file(folder + "/log"))
        defer { server.send(SIGTERM) }
        var banner = ""
        for _ in 0..<300 where !banner.contains("Ctrl-C stops it.") {
            try await Task.sleep(for: .milliseconds(100))
            banner = (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? ""
        }
        let firstLine: Substring = banner.split(separator: "\n").first ?? ""
        let lastWord: Substring? = firstLine.split(separator: " ").last
        let url = String(try #require(lastWord))
        let lines: [String] = [
            "  provider mag (Security API): \(url)/security-api/mag\n    bob / pw: issue-7\n",
            "  provider kids (your service): POST \(url)/programmer/kids/authorize\n",
            "    step-up page: POST \(url)/programmer/kids/step-up (PIN 1111 for scary-1)\n",
        ]
        for line in lines { #expect(banner.contains(line), "\(banner)") }
        let signIn: String = "curl -s -X POST \(url)/security-api/mag/sign_in/ -d 'username=bob&password=pw'"
        let authorize: String = "curl -s -X POST \(url)/programmer/kids/authorize -d 'device_id=d&session_id=s&resource=scary-1'"
        let (status, output) = await Self.shell(signIn + " && echo && " + authorize)
        expectEqual(status, 0)
        #expect(output.contains("<token>") && output.contains("\"TransactionConditionAdvice\""), "\(output)")
    }
}
