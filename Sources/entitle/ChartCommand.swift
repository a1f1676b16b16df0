import EntitlementEngine
import Foundation

/// `entitle chart`: prints the charts generated from the transition table, or rewrites the
/// mermaid block of each `DIR/<region>.md` (keeping the prose around it).
struct ChartCommand {
    func run(format: StateChart.Format, region: TransitionRow.Region?, writeTo: String?) -> Int32 {
        if let folder = writeTo { return write(to: folder) }
        switch format {
        case .mermaid:
            let regions = region.map { [$0] } ?? TransitionRow.Region.allCases
            print(regions.map { "<!-- StateCharts/\($0.rawValue).md -->\n" + StateChart.mermaidBlock($0) }
                .joined(separator: "\n\n"))
        case .dot:
            print(StateChart.dot(), terminator: "")
        case .scxml:
            print(StateChart.scxml(), terminator: "")
        }
        return 0
    }

    private func write(to folder: String) -> Int32 {
        for region in TransitionRow.Region.allCases {
            let path = folder + "/" + region.rawValue + ".md"
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                StandardError.write("entitle chart: cannot read \(path) (write its prose first)\n")
                return 1
            }
            let parts = text.components(separatedBy: "```mermaid\n")
            let body = parts.count == 2 ? parts[1] : ""
            guard parts.count == 2, let end = body.hasPrefix("```") ? body.range(of: "```") : body.range(of: "\n```")
            else {
                StandardError.write("entitle chart: \(path) must hold exactly one ```mermaid block\n")
                return 1
            }
            let updated = parts[0] + StateChart.mermaidBlock(region) + String(body[end.upperBound...])
            do {
                try updated.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                StandardError.write("entitle chart: cannot write \(path): \(error)\n")
                return 1
            }
            print("wrote \(path)")
        }
        return refreshReadme(next: folder)
    }

    /// Replaces each chart block README.md (beside the charts folder) marks with
    /// `<!-- chart: REGION -->` by the generated one.
    private func refreshReadme(next folder: String) -> Int32 {
        let path = (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) + "/../README.md"
        guard var text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
        for region in TransitionRow.Region.allCases {
            let marker = "<!-- chart: \(region.rawValue) -->\n"
            guard let mark = text.range(of: marker), let open = text.range(of: "```mermaid\n", range: mark.upperBound..<text.endIndex),
                open.lowerBound == mark.upperBound,
                let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex)
            else { continue }
            text.replaceSubrange(open.lowerBound..<close.upperBound, with: StateChart.mermaidBlock(region))
        }
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            StandardError.write("entitle chart: cannot write \(path): \(error)\n")
            return 1
        }
        print("refreshed the charts in \(path)")
        return 0
    }
}
