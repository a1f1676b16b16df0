import EntitlementV2
import Foundation
import EntitlementTestSupport
import Testing

/// The named hosts are the ones Adobe's own OpenAPI files list (kept in `Tests/Contract/adobe-openapi`).
@Suite("Adobe Pass's hosts")
struct AdobePassHostTests {
    @Test(arguments: [("restApiV2.json", "/api/v2"), ("dcrApi.json", "/o")])
    func theNamedHostsAreAdobesServers(file: String, prefix: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Contract/adobe-openapi/\(file)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let servers = try #require(document["servers"] as? [[String: Any]]).compactMap { $0["url"] as? String }
        expectEqual(servers, AdobePassHost.all.map { $0 + prefix })
        expectEqual(AdobePassHost.production, "https://sp.auth.adobe.com")
    }
}
