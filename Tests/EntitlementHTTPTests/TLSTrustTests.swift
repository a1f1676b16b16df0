import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

/// The transport trusts the system's certificate store and nothing else, on each stack: a server whose
/// certificate no trusted authority signed is refused before a request is sent (a bearer token never
/// reaches it), while the one `.ci/run` signed with the authority it trusts is answered. On libcurl the
/// failure says so (`TLS failure`); `URLSession` on Linux reports only an unknown error.
@Suite("The HTTP transport's TLS trust")
struct TLSTrustTests {
    /// A self-signed certificate for localhost and 127.0.0.1 in `folder`, as `server.crt` and `server.key`.
    static func makeUntrustedCertificate(in folder: String) async throws {
        let arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
            "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", "server.key", "-out", "server.crt",
        ]
        let made = try await ChildProcess.run("/usr/bin/openssl", arguments, directory: folder)
        try #require(made.termination == .exited(0), "openssl: \(String(decoding: made.errors, as: UTF8.self))")
    }

    @Test(arguments: HTTPFaultTests.stacks)
    func aCertificateNoTrustedAuthoritySignedIsRefusedUnsent(stack: HTTPStack) async throws {
        guard let trusted = TransportChaosTests.tlsFolder else {
            #expect(!TransportChaosTests.tlsRequired, "ENTITLE_REQUIRE_TLS is set but ENTITLE_TLS_DIR has no certificate, or stunnel4 is missing")
            return
        }
        let captured = HTTPV2TransportTests.Captured()
        let server = try captured.answeringEmptyJSON()
        let folder = ScratchSpace.path("entitle-trust-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await Self.makeUntrustedCertificate(in: folder)
        for (certificates, answered) in [(folder, false), (trusted, true)] {
            let port = try HTTPListener().port  // free a moment ago (the listener closes as it goes)
            let started = await OwnThread.run {
                Result { () throws(ChildProcessError) in try TLSTerminator(certificates: certificates, target: server.port, port: port, folder: folder) }
            }
            let front = try started.get()
            let transport = HTTPV2Transport(baseURL: "https://localhost:\(port)", timeout: .seconds(600), stack: stack)
            let context = V2RequestContext(bearer: "a-bearer-token")
            if answered {
                expectEqual(try await transport.send(.configuration(serviceProvider: "sp"), context: context).status, 200)
            } else {
                do throws(BackendError) {
                    let answer = try await transport.send(.configuration(serviceProvider: "sp"), context: context)
                    Issue.record("an untrusted server answered \(answer.status)")
                } catch {
                    // FoundationNetworking reports the refused handshake as URLError -1 (unknown); curl names it.
                    expectEqual(error, stack == .libcurl ? .network("TLS failure") : .network("connection failed (URLError -1)"))
                }
                #expect(captured.all.isEmpty, "the untrusted server got a request")
            }
            await OwnThread.run { front.stop() }
        }
        expectEqual(captured.all.count, 1, "only the trusted server was asked")
        await server.shutdown()
    }
}
