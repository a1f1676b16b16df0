import EntitlementCommandLine
import EntitlementScenarios
import Foundation

/// Reads the files a command is given and writes the ones it makes, with problems a user can act
/// on and the exit status each deserves — never the text of a Foundation error.
enum CommandFile {
    /// Why a file could not be read or written.
    struct Problem: Error, CustomStringConvertible {
        /// What went wrong, naming the file.
        let description: String
        /// What the command exits with.
        let status: ExitStatus
    }

    /// Whether `path` is a file this process may read (without reading it).
    static func checkReadable(_ path: String) throws(Problem) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw Problem(description: "\(path): no such file", status: .noInput)
        }
        guard !isFolder.boolValue else { throw Problem(description: "\(path): is a folder, not a file", status: .noInput) }
        guard FileManager.default.isReadableFile(atPath: path) else { throw Problem(description: "\(path): permission denied", status: .noInput) }
    }

    /// The text of the file at `path`.
    static func read(_ path: String) throws(Problem) -> String {
        try checkReadable(path)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "\(path): permission denied", status: .noInput)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Problem(description: "\(path): not UTF-8 text", status: .invalidInput)
        }
        return text
    }

    /// The scenario script at `path`; one that does not parse is `invalidInput`, with every error.
    static func scenario(_ path: String) throws(Problem) -> Scenario {
        let text = try read(path)
        do {
            return try ScenarioParser.parse(text, file: path)
        } catch {
            throw Problem(description: "\(error)", status: .invalidInput)
        }
    }

    /// Writes `text` to `path` atomically.
    static func write(_ text: String, to path: String) throws(Problem) {
        let folder = (path as NSString).deletingLastPathComponent
        let parent = folder.isEmpty ? "." : folder
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder), isFolder.boolValue else {
            throw Problem(description: "cannot write \(path): no folder \(parent)", status: .cannotCreate)
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            let why = FileManager.default.isWritableFile(atPath: parent) ? "the file cannot be replaced" : "permission denied"
            throw Problem(description: "cannot write \(path): \(why)", status: .cannotCreate)
        }
    }
}
