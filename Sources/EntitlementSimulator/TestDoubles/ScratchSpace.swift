import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Paths for the files a test makes, all under one folder of the process's own that is removed when
/// the process exits: a test run leaves nothing behind in the temporary folder, however its tests end.
/// A folder left by a process that did not exit (it crashed or was killed) is removed by the next
/// process that makes one.
package enum ScratchSpace {
    /// The prefix of every process's folder in the temporary folder, before the process id.
    static let prefix = "entitle-scratch-"

    /// This process's folder (owner-only), made on first use.
    package static let folder: String = {
        let temporary = NSTemporaryDirectory()
        removeFoldersOfEndedProcesses(in: temporary)
        let folder = temporary + prefix + String(getpid())
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        atexit { try? FileManager.default.removeItem(atPath: ScratchSpace.folder) }
        return folder
    }()

    /// A new path in this process's folder, `name` followed by a unique suffix and `ending`; nothing is
    /// made there.
    package static func path(_ name: String, ending: String = "") -> String {
        folder + "/" + name + UUID().uuidString + ending
    }

    /// Removes the folders of processes that no longer run.
    static func removeFoldersOfEndedProcesses(in temporary: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: temporary + name)
        }
    }
}
