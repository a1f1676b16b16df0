import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("The file token store")
struct FileTokenStorageTests {
    static func temporaryFolder() -> String {
        let folder = ScratchSpace.path("entitle-store-")
        return folder
    }

    static let token = AuthenticationToken(
        mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "u",
        expires: Timestamp(milliseconds: 9_999_999_999_999))

    @Test func savesAndLoadsWithOwnerOnlyPermissions() async throws {
        let folder = Self.temporaryFolder()
        let store = try FileTokenStorage(folder: folder)
        try await expectEqual(store.tokens(deviceID: "d", requestorID: "r"), .empty)
        let tokens = StoredTokens(authentication: Self.token, selectedProvider: "acme-cable", deviceID: "d")
        try await store.overwrite(tokens, deviceID: "d", requestorID: "r")
        try await expectEqual(store.tokens(deviceID: "d", requestorID: "r"), tokens)
        try await expectEqual(store.tokens(deviceID: "d", requestorID: "other"), .empty, "one file per device and requestor")
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path(deviceID: "d", requestorID: "r"))
        expectEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder)
        expectEqual((folderAttributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        #expect(!store.path(deviceID: "d", requestorID: "r").contains("r.tokens"), "ids never appear in file names")
        #expect(try String(contentsOfFile: store.path(deviceID: "d", requestorID: "r"), encoding: .utf8).contains("acme-cable"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test func aCorruptFileIsMovedAsideWithAClearError() async throws {
        let store = try FileTokenStorage(folder: Self.temporaryFolder())
        let path = store.path(deviceID: "d", requestorID: "r")
        try Data("{\"format\":1,\"tok".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(throws: TokenStorageError.corrupt(file: path, movedTo: path + ".corrupt-1")) {
            try await store.tokens(deviceID: "d", requestorID: "r")
        }
        #expect(FileManager.default.fileExists(atPath: path + ".corrupt-1"))
        try await expectEqual(store.tokens(deviceID: "d", requestorID: "r"), .empty, "the next load starts afresh")
    }

    /// A file store knows its version at once while the file is the one it last read or wrote, and
    /// must be asked again once another writer replaced it.
    @Test func itKnowsItsVersionAtOnceUntilAnotherWriterChangesTheFile() async throws {
        let folder = Self.temporaryFolder()
        let mine = try FileTokenStorage(folder: folder)
        let theirs = try FileTokenStorage(folder: folder)
        expectEqual(mine.knownVersion(deviceID: "d", requestorID: "r"), .absent, "no file: nothing stored")
        let first = try await mine.save(StoredTokens(selectedProvider: "a", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        expectEqual(mine.knownVersion(deviceID: "d", requestorID: "r"), first)
        #expect(theirs.knownVersion(deviceID: "d", requestorID: "r") == nil, "never read by this store")
        let second = try await theirs.save(StoredTokens(selectedProvider: "b", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: first)
        #expect(mine.knownVersion(deviceID: "d", requestorID: "r") == nil, "replaced by another writer: ask again")
        try await expectEqual(mine.version(deviceID: "d", requestorID: "r"), second)
        expectEqual(mine.knownVersion(deviceID: "d", requestorID: "r"), second)
    }

    /// A file a newer version wrote is refused where it is, with a typed error — not moved aside as
    /// corrupt: this version is old, the file is fine.
    @Test func aFileOfANewerFormatIsRefusedInPlace() async throws {
        let store = try FileTokenStorage(folder: Self.temporaryFolder())
        let path = store.path(deviceID: "d", requestorID: "r")
        let newer = #"{"format":2,"holds":{"something":"else"}}"#
        try Data(newer.utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try await store.load(deviceID: "d", requestorID: "r")
            Issue.record("a newer file was read")
        } catch {
            #expect(error.code == .newerFormat && !error.isTransient && error.description.contains("format 2"), "\(error)")
        }
        await #expect(throws: TokenStorageError.self) { try await store.save(.empty, deviceID: "d", requestorID: "r", replacing: .absent) }
        expectEqual(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self), newer, "left as it was")
        #expect(!FileManager.default.fileExists(atPath: path + ".corrupt-1"))
    }

    @Test func aForeignFileIsMovedAside() async throws {
        let store = try FileTokenStorage(folder: Self.temporaryFolder())
        try await store.overwrite(StoredTokens(selectedProvider: "x", deviceID: "d"), deviceID: "d", requestorID: "someone-else")
        let theirs = store.path(deviceID: "d", requestorID: "someone-else")
        let mine = store.path(deviceID: "d", requestorID: "r")
        try FileManager.default.copyItem(atPath: theirs, toPath: mine)
        await #expect(throws: TokenStorageError.foreign(file: mine, movedTo: mine + ".corrupt-1")) {
            try await store.tokens(deviceID: "d", requestorID: "r")
        }
    }

    @Test func anotherDevicesTokensAreClearedWithSEC412() async throws {
        // A store copied from another device: its file says device "tv-old".
        let folder = Self.temporaryFolder()
        let store = try FileTokenStorage(folder: folder)
        let copied = StoredTokens(authentication: Self.token, selectedProvider: "acme-cable", deviceID: "tv-old")
        try await store.overwrite(copied, deviceID: "device-1", requestorID: "sim-requestor")
        let session = SimulatedSession(storage: store)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.checkAuthentication()
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(statusCode(callbacks.first), "SEC412")
        expectEqual(callbacks.dropFirst().first, .setRequestorComplete(success: true))
        expectEqual(callbacks.last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        try await expectEqual(store.tokens(deviceID: "device-1", requestorID: "sim-requestor"), .empty, "cleared")
        await session.expectClean()
    }

    @Test func aLoginSurvivesARestartOnTheFileStore() async throws {
        let folder = Self.temporaryFolder()
        let clock = ManualClock()
        let first = SimulatedSession(storage: try FileTokenStorage(folder: folder), clock: clock)
        await first.signIn()
        let restarted = SimulatedSession(storage: try FileTokenStorage(folder: folder), clock: clock, simulator: first.simulator)
        await restarted.configure()
        await restarted.enabler.checkAuthentication()
        expectEqual(restarted.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await first.expectClean()
        await restarted.expectClean()
    }

    // MARK: - Crashes and concurrent processes

    static var entitle: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("entitle")
    }

    /// Starts a writer and waits (on a thread of its own: the read blocks) until it says it is ready.
    static func launchWriter(_ folder: String) async throws -> ChildProcess {
        let output = Pipe()
        let process = try ChildProcess.spawn(
            entitle.path, ["storage-stress", folder], output: .descriptor(output.fileHandleForWriting.fileDescriptor))
        try output.fileHandleForWriting.close()
        let reading = output.fileHandleForReading
        _ = await OwnThread.run { reading.availableData.count }  // "ready"
        return process
    }

    /// Both variants the writer alternates between, by their selected provider.
    static func check(_ tokens: StoredTokens) -> Bool {
        tokens == .empty
            || (tokens.deviceID == "stress-device" && ["acme-cable", "bluesky-tv"].contains(tokens.selectedProvider)
                && tokens.authentication?.userID.count == 4000
                && Set(tokens.authentication?.userID ?? "").count == 1
                && (tokens.selectedProvider == "acme-cable") == (tokens.authentication?.userID.first == "a"))
    }

    @Test func aWriterKilledMidWriteNeverLeavesAMixedOrCorruptStore() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.entitle.path), "swift test builds entitle beside the tests")
        let folder = Self.temporaryFolder()
        let store = try FileTokenStorage(folder: folder)
        var seen: Set<String> = []
        for round in 0..<40 {
            let writer = try await Self.launchWriter(folder)
            try? await Task.sleep(for: .milliseconds(Int.random(in: 1...25)))
            writer.send(SIGKILL)
            await expectEqual(writer.waitForExit(), .signalled(SIGKILL), "round \(round): the writer was not killed")
            let tokens = try await store.tokens(deviceID: "stress-device", requestorID: "stress")
            #expect(Self.check(tokens), "round \(round): the store holds a mix")
            seen.insert(tokens.selectedProvider ?? "empty")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(!files.contains { $0.contains(".corrupt-") }, "nothing was ever corrupt")
        // Temporary files left behind are writes the kill interrupted: the test did kill mid-write.
        let interrupted = files.filter { $0.contains(".tmp-") }.count
        print("file store crash test: 40 kills, \(interrupted) of them interrupted a write in progress")
        #expect(interrupted > 0, "no kill landed during a write; the test proved nothing")
        #expect(seen.contains("acme-cable") || seen.contains("bluesky-tv"), "the writer did write")
    }

    @Test func twoProcessesWritingTheSameFileNeverCorruptIt() async throws {
        let folder = Self.temporaryFolder()
        let store = try FileTokenStorage(folder: folder)
        let writers = [try await Self.launchWriter(folder), try await Self.launchWriter(folder)]
        // Whatever happens below, the writers never outlive the test.
        defer {
            for writer in writers {
                writer.send(SIGKILL)
                OwnThread.start { _ = writer.waitForExit() }  // reaped on a thread of its own: a defer cannot await
            }
        }
        for _ in 0..<50 {
            #expect(Self.check(try await store.tokens(deviceID: "stress-device", requestorID: "stress")))
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(Self.check(try await store.tokens(deviceID: "stress-device", requestorID: "stress")))
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: folder)).contains { $0.contains(".corrupt-") })
    }

    // MARK: - Containment and bounds

    @Test func aPathThatIsNotAFolderIsRefusedAndLeftAlone() async throws {
        let file = Self.temporaryFolder()
        try "not a folder".write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o644)
        #expect(throws: TokenStorageError.refusedLocation("\(file) is not a folder")) { try FileTokenStorage(folder: file) }
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        expectEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o644, "a refused path is never chmod-ed")
    }

    @Test func aSymlinkedFolderIsRefusedAndItsTargetLeftAlone() async throws {
        let target = Self.temporaryFolder()
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        chmod(target, 0o755)
        let link = Self.temporaryFolder()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(throws: TokenStorageError.refusedLocation("\(link) is a symbolic link; give the folder's real path")) {
            try FileTokenStorage(folder: link)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: target)
        expectEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o755)
    }

    @Test func symlinksPlantedInTheFolderAreNeverFollowedOut() async throws {
        let store = try FileTokenStorage(folder: Self.temporaryFolder())
        let outside = Self.temporaryFolder()
        try "outside".write(toFile: outside, atomically: true, encoding: .utf8)
        let file = store.path(deviceID: "d", requestorID: "r")
        // The lock file points out of the folder: refused, and the outside file is untouched.
        try FileManager.default.createSymbolicLink(atPath: file + ".lock", withDestinationPath: outside)
        await #expect(throws: TokenStorageError.refusedLocation("\(file).lock is a symbolic link; it was not followed")) {
            try await store.load(deviceID: "d", requestorID: "r")
        }
        try FileManager.default.removeItem(atPath: file + ".lock")
        // The token file points out of the folder: refused on read.
        try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: outside)
        await #expect(throws: TokenStorageError.refusedLocation("\(file) is a symbolic link; it was not followed")) {
            try await store.load(deviceID: "d", requestorID: "r")
        }
        try expectEqual(String(contentsOfFile: outside, encoding: .utf8), "outside")
    }

    @Test func aHugeFileIsRefusedUnread() async throws {
        let store = try FileTokenStorage(folder: Self.temporaryFolder(), maximumFileSize: 64 << 10)
        let file = store.path(deviceID: "d", requestorID: "r")
        try Data(repeating: 0x20, count: 200 << 10).write(to: URL(fileURLWithPath: file))
        await #expect(throws: TokenStorageError.tooLarge(file: file, limit: 64 << 10)) {
            try await store.load(deviceID: "d", requestorID: "r")
        }
        // The engine starts without tokens and says why in its log; it never reads the file whole.
        let session = SimulatedSession(storage: store)
        await session.configure()
        await session.enabler.checkAuthentication()
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.expectClean()
    }
}
