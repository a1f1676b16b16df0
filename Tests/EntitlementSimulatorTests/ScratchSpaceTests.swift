import Foundation
import EntitlementTestSupport
import Testing

@testable import EntitlementSimulator

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Scratch space for tests' files")
struct ScratchSpaceTests {
    @Test func pathsAreNewAndInTheProcesssOwnFolder() throws {
        let first = ScratchSpace.path("entitle-sample-", ending: ".json")
        let second = ScratchSpace.path("entitle-sample-", ending: ".json")
        #expect(first != second)
        #expect(first.hasPrefix(ScratchSpace.folder + "/entitle-sample-") && first.hasSuffix(".json"))
        #expect(ScratchSpace.folder.hasSuffix("/entitle-scratch-\(getpid())"))
        let attributes = try FileManager.default.attributesOfItem(atPath: ScratchSpace.folder)
        expectEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        #expect(!FileManager.default.fileExists(atPath: first), "a path is named, nothing is made there")
    }

    @Test func aFolderLeftByAnEndedProcessIsRemovedAndALiveOnesIsKept() throws {
        let temporary = ScratchSpace.path("entitle-temporary-") + "/"
        // A process id above the kernel's largest (4,194,304) names no process.
        let ended = temporary + ScratchSpace.prefix + "4194305"
        let live = temporary + ScratchSpace.prefix + String(getpid())
        let other = temporary + "entitle-scratch-notanumber"
        for folder in [ended, live, other] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        ScratchSpace.removeFoldersOfEndedProcesses(in: temporary)
        #expect(!FileManager.default.fileExists(atPath: ended))
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(FileManager.default.fileExists(atPath: other), "only folders named by a process id are the sweep's")
    }
}
