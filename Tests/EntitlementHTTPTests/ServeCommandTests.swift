import Foundation
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
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments = ["-c", command]
                let output = Pipe()
                process.standardOutput = output
                try? process.run()
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                done.resume(returning: (process.terminationStatus, text))
            }.start()
        }
    }

    @Test func startsAnswersReadmesCurlExamplesAndStopsOnSIGTERM() async throws {
        let log = NSTemporaryDirectory() + "entitle-serve-" + UUID().uuidString + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let server = Process()
        server.executableURL = Self.entitle
        server.arguments = ["serve", "--port", "0"]
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        server.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try server.run()
        var url = ""
        for _ in 0..<50 where url.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            url = text.split(separator: "\n").first.flatMap { $0.split(separator: " ").last }.map(String.init) ?? ""
        }
        #expect(url.hasPrefix("http://127.0.0.1:"))
        let banner = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(banner.contains("alice / wonderland / acme-cable"), "the world's users are printed")

        // README's curl walk-through, verbatim apart from the URL.
        let script = """
            set -e
            URL=\(url)
            curl -s -X POST "$URL/o/client/register" -H 'Content-Type: application/json' \\
              -d '{"software_statement":"sim.software-statement.v2"}' > /tmp/$$.client.json
            CLIENT_ID=$(sed 's/.*"client_id":"\\([^"]*\\)".*/\\1/' /tmp/$$.client.json)
            CLIENT_SECRET=$(sed 's/.*"client_secret":"\\([^"]*\\)".*/\\1/' /tmp/$$.client.json)
            TOKEN=$(curl -s -X POST "$URL/o/client/token" \\
              -d "client_id=$CLIENT_ID&client_secret=$CLIENT_SECRET&grant_type=client_credentials" \\
              | sed 's/.*"access_token":"\\([^"]*\\)".*/\\1/')
            DEVICE="fingerprint $(printf 'my-tv-1' | base64)"
            curl -s "$URL/api/v2/sim-requestor/configuration" -H "Authorization: Bearer $TOKEN" | head -c 40; echo
            curl -s -X POST "$URL/api/v2/sim-requestor/sessions" -H "Authorization: Bearer $TOKEN" \\
              -H "AP-Device-Identifier: $DEVICE" -H 'X-Forwarded-For: 203.0.113.7' \\
              -d 'mvpd=acme-cable&domainName=example.com&redirectUrl=http%3A%2F%2F127.0.0.1%3A9%2Fdone'; echo
            rm -f /tmp/$$.client.json
            """
        let (status, output) = await Self.shell(script)
        #expect(status == 0)
        #expect(output.hasPrefix("{\"requestor\":{"), "configuration: \(output)")
        #expect(output.contains("\"actionName\":\"authenticate\""), "session: \(output)")

        server.terminate()  // SIGTERM
        let exited = await withCheckedContinuation { done in
            Thread {
                server.waitUntilExit()
                done.resume(returning: server.terminationStatus)
            }.start()
        }
        #expect(exited == 0, "a clean stop")
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("SIGTERM: stopping") && text.hasSuffix("entitle serve: stopped\n"))
        let access = text.split(separator: "\n").filter { $0.hasPrefix("127.0.0.1 \"") }
        #expect(access.count == 4, "one access-log line per request: \(access)")
        #expect(access.contains { $0.contains("\"POST /api/v2/sim-requestor/sessions\" 200") })
        #expect(!text.contains("secret."), "no client secret in the log")
    }
}
