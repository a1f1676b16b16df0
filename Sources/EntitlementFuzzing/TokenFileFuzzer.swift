import EntitlementEngine
import EntitlementSimulator
import Foundation

/// Fuzzes token files: a mutated file on a `FileTokenStorage` is read by a real engine at
/// `setRequestor`, which then answers every call — never traps, never leaves a call unanswered.
package enum TokenFileFuzzer {
    /// The `token-file` target.
    package static let target = FuzzTarget(
        name: "token-file", summary: "mutated token files: the engine configures and answers every call, never traps",
        input: { text(seed: $0) }, run: { await check(seed: $0) })

    static func text(seed: UInt64) -> String {
        var random = FuzzRandom(seed: seed)
        // A token file is one line of JSON: mutate it as pieces split at commas.
        let pieces = FuzzCorpus.tokenFile.split(separator: ",", omittingEmptySubsequences: false).joined(separator: ",\n")
        return TextMutator.mutate(pieces, &random).replacingOccurrences(of: ",\n", with: ",")
    }

    static func check(seed: UInt64) async -> FuzzFailure? {
        let text = text(seed: seed)
        let folder = NSTemporaryDirectory() + "entitle-fuzz-\(getpid())-\(seed)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard let storage = try? FileTokenStorage(folder: folder) else {
            return FuzzFailure(seed: seed, problem: "could not make a store in \(folder)", reproduction: text)
        }
        guard FileManager.default.createFile(atPath: storage.path(deviceID: "device-1", requestorID: "sim-requestor"), contents: Data(text.utf8))
        else { return FuzzFailure(seed: seed, problem: "could not write the token file", reproduction: text) }
        let session = SimulatedSession(storage: storage)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.checkAuthentication()
        await session.enabler.checkAuthorization("news-channel")
        await session.enabler.getMetadata(.authenticationExpiry)
        await session.enabler.getSelectedProvider()
        await session.enabler.checkPreauthorizedResources(["news-channel", "movies-hd"])
        await session.settle()
        await session.clock.advance(by: .seconds(700))
        await session.settle()
        _ = session.ledger.take()
        let problems = session.ledger.violations()
        guard problems.isEmpty else {
            return FuzzFailure(seed: seed, problem: problems.joined(separator: "; "), reproduction: text)
        }
        return nil
    }
}
