import EntitlementEngine
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

/// Tokens sealed at rest: the personal data a store writes (device id, user id, household, zip) never
/// appears in clear, a store without the key refuses sealed tokens without moving or overwriting them,
/// and sealing can be turned on over plain files.
@Suite("Sealed tokens at rest")
struct TokenSealingTests {
    /// Planted personal data: none of it may be readable in what a sealing store writes.
    static let planted = ["planted-device-7731", "planted-user-4410", "planted-household-9920", "90210-PLANTED"]

    static func tokens() -> StoredTokens {
        let token = AuthenticationToken(
            mvpdID: "acme-cable", requestorID: "sim-requestor", userID: planted[1], expires: Timestamp(milliseconds: 9_999_999_999_999),
            metadata: ["householdID": .text(planted[2]), "zip": .list([planted[3]]), "userID": .text(planted[1])])
        return StoredTokens(authentication: token, selectedProvider: "acme-cable", deviceID: planted[0])
    }

    static func folder() -> String { ScratchSpace.path("entitle-sealed-") }

    @Test func aSealedFileHoldsNoPersonalDataInClearAndReadsBack() async throws {
        let store = try FileTokenStorage(folder: Self.folder(), sealing: TestOnlySealing(key: "fleet-key"))
        try await store.overwrite(Self.tokens(), deviceID: Self.planted[0], requestorID: "sim-requestor")
        let raw = try #require(FileManager.default.contents(atPath: store.path(deviceID: Self.planted[0], requestorID: "sim-requestor")))
        let text = String(decoding: raw, as: UTF8.self)
        #expect(text.hasPrefix("sealed:1:"))
        for value in Self.planted { #expect(!text.contains(value), "\(value) is in the file in clear") }
        try await expectEqual(store.tokens(deviceID: Self.planted[0], requestorID: "sim-requestor"), Self.tokens())
        try await expectEqual(store.authentications(deviceID: Self.planted[0]), [Self.tokens().authentication!])
    }

    @Test func aStoreWithoutTheKeyRefusesSealedTokensAndLeavesThemAlone() async throws {
        let folder = Self.folder()
        let sealed = try FileTokenStorage(folder: folder, sealing: TestOnlySealing(key: "fleet-key"))
        try await sealed.overwrite(Self.tokens(), deviceID: "d", requestorID: "r")
        let file = sealed.path(deviceID: "d", requestorID: "r")
        let before = try #require(FileManager.default.contents(atPath: file))
        for other in [try FileTokenStorage(folder: folder), try FileTokenStorage(folder: folder, sealing: TestOnlySealing(key: "another-key"))] {
            do {
                _ = try await other.load(deviceID: "d", requestorID: "r")
                Issue.record("a store without the key read sealed tokens")
            } catch {
                #expect(error.code == .unsealable && !error.isTransient, "\(error)")
            }
            await #expect(throws: TokenStorageError.self) { try await other.save(.empty, deviceID: "d", requestorID: "r", replacing: .absent) }
        }
        expectEqual(FileManager.default.contents(atPath: file), before, "neither moved aside nor overwritten")
        try await expectEqual(sealed.tokens(deviceID: "d", requestorID: "r"), Self.tokens())
    }

    @Test func sealingTurnedOnReadsPlainFilesAndSealsThemAtTheNextSave() async throws {
        let folder = Self.folder()
        let plain = try FileTokenStorage(folder: folder)
        try await plain.overwrite(Self.tokens(), deviceID: "d", requestorID: "r")
        let sealing = try FileTokenStorage(folder: folder, sealing: TestOnlySealing(key: "fleet-key"))
        let loaded = try await sealing.load(deviceID: "d", requestorID: "r")
        expectEqual(loaded.tokens, Self.tokens())
        _ = try await sealing.save(loaded.tokens, deviceID: "d", requestorID: "r", replacing: loaded.version)
        let text = String(decoding: try #require(FileManager.default.contents(atPath: sealing.path(deviceID: "d", requestorID: "r"))), as: UTF8.self)
        #expect(text.hasPrefix("sealed:1:") && !text.contains(Self.planted[1]))
    }

    @Test func anAlteredSealedValueIsRefused() throws {
        let sealing = TestOnlySealing(key: "k")
        var sealed = try sealing.seal(Array("{\"a\":1}".utf8))
        try expectEqual(sealing.open(sealed), Array("{\"a\":1}".utf8))
        sealed[20] ^= 1
        #expect(throws: TokenSealingError.self) { try sealing.open(sealed) }
        #expect(try sealing.seal([1, 2, 3]) != sealing.seal([1, 2, 3]), "a fresh nonce each time")
    }
}

/// Logs name a device by a keyed pseudonym, never its id.
@Suite("Device pseudonyms in logs")
struct DevicePseudonymTests {
    @Test func aDeviceIdNeverReachesTheLogAndItsPseudonymFollowsTheKey() {
        let planted = "planted-device-5512"
        let lines = LockedLines()
        let telemetry = EngineTelemetry(session: DevicePseudonym.of(planted) + "|sim-requestor", logger: lines, minimumLevel: .debug)
        let started = EngineEvent.started(EngineSettings(), deviceID: planted, at: Timestamp(milliseconds: 0))
        telemetry.observe(started)
        let all = lines.text + "\n" + started.redactedDescription
        #expect(!all.contains(planted), "\(all)")
        #expect(all.contains(DevicePseudonym.of(planted)))
        #expect(DevicePseudonym.of(planted) == DevicePseudonym.of(planted) && DevicePseudonym.of(planted) != DevicePseudonym.of("other"))
        let defaultKey = Array("entitle.device-pseudonym.default".utf8)
        expectEqual(DevicePseudonym.of(planted, key: defaultKey), DevicePseudonym.of(planted), "until a key is set, the package's")
        #expect(DevicePseudonym.of(planted, key: Array("the fleet's key".utf8)) != DevicePseudonym.of(planted), "keyed: another key, another pseudonym")
    }

    final class LockedLines: EngineLogHandler, @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        var text: String { lock.withLock { lines.joined(separator: "\n") } }
        func log(level: LogLevel, message: String, metadata: [String: String]) {
            lock.withLock { lines.append(message + " " + metadata.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")) }
        }
    }
}
