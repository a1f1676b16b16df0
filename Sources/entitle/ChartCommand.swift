import EntitlementEngine
import Foundation

/// `entitle chart`: prints the charts generated from the transition table, or rewrites the
/// mermaid block of each `DIR/<region>.md` (keeping the prose around it).
struct ChartCommand {
    func run(format: StateChart.Format, region: TransitionRow.Region?, writeTo: String?) -> ExitStatus {
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
        return .success
    }

    private func write(to folder: String) -> ExitStatus {
        for region in TransitionRow.Region.allCases {
            let path = folder + "/" + region.rawValue + ".md"
            let text: String
            do {
                text = try CommandFile.read(path)
            } catch {
                StandardError.write("entitle chart: \(error) (write the chart's prose first)\n")
                return error.status
            }
            let parts = text.components(separatedBy: "```mermaid\n")
            let body = parts.count == 2 ? parts[1] : ""
            guard parts.count == 2, let end = body.hasPrefix("```") ? body.range(of: "```") : body.range(of: "\n```")
            else {
                StandardError.write("entitle chart: \(path) must hold exactly one ```mermaid block\n")
                return .invalidInput
            }
            let updated = parts[0] + StateChart.mermaidBlock(region) + String(body[end.upperBound...])
            do {
                try CommandFile.write(updated, to: path)
            } catch {
                StandardError.write("entitle chart: \(error)\n")
                return error.status
            }
            print("wrote \(path)")
        }
        return refreshReadme(next: folder)
    }

    /// Replaces each chart block README.md (beside the charts folder) marks with
    /// `<!-- chart: REGION -->` by the generated one.
    private func refreshReadme(next folder: String) -> ExitStatus {
        let path = (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) + "/../README.md"
        guard var text = try? CommandFile.read(path) else { return .success }
        for region in TransitionRow.Region.allCases {
            let marker = "<!-- chart: \(region.rawValue) -->\n"
            guard let mark = text.range(of: marker), let open = text.range(of: "```mermaid\n", range: mark.upperBound..<text.endIndex),
                open.lowerBound == mark.upperBound,
                let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex)
            else { continue }
            text.replaceSubrange(open.lowerBound..<close.upperBound, with: StateChart.mermaidBlock(region))
        }
        do {
            try CommandFile.write(text, to: path)
        } catch {
            StandardError.write("entitle chart: \(error)\n")
            return error.status
        }
        print("refreshed the charts in \(path)")
        return .success
    }
}
