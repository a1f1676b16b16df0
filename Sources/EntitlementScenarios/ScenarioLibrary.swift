import Foundation

/// Finds and loads `.scenario` files.
public enum ScenarioLibrary {
    /// Why a path could not be used.
    public struct LoadError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, naming the path.
        public var description: String
    }

    /// The `.scenario` files at `paths` (files as given; folders searched recursively), each folder's sorted.
    public static func files(at paths: [String]) throws(LoadError) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw LoadError(description: "\(path): no such file or folder")
            }
            guard isDirectory.boolValue else {
                files.append(path)
                continue
            }
            let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? [])
                .filter { $0.hasSuffix(".scenario") }
                .sorted()
                .map { (path.hasSuffix("/") ? path : path + "/") + $0 }
            files += found
        }
        return files
    }

    /// Reads and parses one file.
    public static func load(_ file: String) throws -> Scenario {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw LoadError(description: "\(file): cannot be read as UTF-8 text")
        }
        return try ScenarioParser.parse(text, file: file)
    }
}
