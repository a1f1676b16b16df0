import Foundation
import Testing

/// The rows the machine records are trustworthy only if its region states change in one place.
@Suite("The machine changes its region states only through the recording helpers")
struct SourceDisciplineTests {
    @Test func regionStatesAreAssignedOnlyInTheHelpers() throws {
        let folder = ChartConformanceTests.root.appendingPathComponent("Sources/EntitlementEngine/Machine")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        var assignments: [String] = []
        for file in files {
            let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
            for (index, line) in lines.enumerated() {
                let code = line.trimmingSpaces
                if code.hasPrefix("authentication = ") || code.hasPrefix("configuration = ")
                    || code.hasPrefix("self.authentication = ") || code.hasPrefix("self.configuration = ")
                {
                    assignments.append("\(file):\(index + 1): \(code)")
                }
            }
        }
        #expect(
            assignments.sorted() == [
                "EntitlementMachine.swift:\(Self.line(of: "        authentication = next", in: folder)): authentication = next",
                "EntitlementMachine.swift:\(Self.line(of: "        configuration = next", in: folder)): configuration = next",
            ].sorted(), "\(assignments)")
    }

    static func line(of text: String, in folder: URL) -> Int {
        let lines = (try? String(contentsOf: folder.appendingPathComponent("EntitlementMachine.swift"), encoding: .utf8))?
            .components(separatedBy: "\n") ?? []
        return (lines.firstIndex(of: text) ?? -1) + 1
    }
}
