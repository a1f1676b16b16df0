import EntitlementCommandLine
import EntitlementEngine
import EntitlementTracing

/// `entitle chart`: prints the charts generated from the transition table (the overview and the
/// detailed parts), or rewrites the mermaid block of each `DIR/<chart>.md` (keeping the prose
/// around it) and the charts README.md shows.
struct ChartCommand {
    /// The names `--chart` takes: the overview, then every part.
    static let names = ["overview"] + StateChart.Part.all.map(\.name)

    /// The fenced block of the chart called `name`.
    static func block(_ name: String) -> String? {
        if name == "overview" { return StateChart.overviewBlock() }
        return StateChart.Part.named(name).map(StateChart.mermaidBlock)
    }

    func run(format: StateChart.Format, chart: String?, writeTo: String?) -> ExitStatus {
        if let folder = writeTo { return write(to: folder) }
        switch format {
        case .mermaid:
            let names = chart.map { [$0] } ?? Self.names
            print(names.compactMap { name in Self.block(name).map { "<!-- StateCharts/\(name).md -->\n" + $0 } }.joined(separator: "\n\n"))
        case .dot:
            print(StateChart.dot(), terminator: "")
        case .scxml:
            print(StateChart.scxml(), terminator: "")
        }
        return .success
    }

    private func write(to folder: String) -> ExitStatus {
        for name in Self.names {
            let path = folder + "/" + name + ".md"
            let text: String
            do {
                text = try CommandFile.read(path)
            } catch {
                StandardError.write("entitle chart: \(error) (write the chart's prose first)\n")
                return error.status
            }
            let parts = text.components(separatedBy: "```mermaid\n")
            guard parts.count == 2, let open = text.range(of: "```mermaid\n"), let end = Self.blockEnd(in: text, after: open.upperBound),
                let block = Self.block(name)
            else {
                StandardError.write("entitle chart: \(path) must hold exactly one ```mermaid block\n")
                return .invalidInput
            }
            do {
                try CommandFile.write(String(text[..<open.lowerBound]) + block + String(text[end...]), to: path)
            } catch {
                StandardError.write("entitle chart: \(error)\n")
                return error.status
            }
            print("wrote \(path)")
        }
        return refreshReadme(next: folder)
    }

    /// The end of the closing fence of a block whose body starts at `start` (an empty block's
    /// fence is right there).
    static func blockEnd(in text: String, after start: String.Index) -> String.Index? {
        if text[start...].hasPrefix("```") { return text.index(start, offsetBy: 3) }
        return text.range(of: "\n```", range: start..<text.endIndex)?.upperBound
    }

    /// Replaces each chart block README.md (beside the charts folder) marks with
    /// `<!-- chart: NAME -->` by the generated one.
    private func refreshReadme(next folder: String) -> ExitStatus {
        let path = (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) + "/../README.md"
        guard var text = try? CommandFile.read(path) else { return .success }
        for name in Self.names {
            let marker = "<!-- chart: \(name) -->\n"
            guard let mark = text.range(of: marker), let open = text.range(of: "```mermaid\n", range: mark.upperBound..<text.endIndex),
                open.lowerBound == mark.upperBound, let end = Self.blockEnd(in: text, after: open.upperBound), let block = Self.block(name)
            else { continue }
            text.replaceSubrange(open.lowerBound..<end, with: block)
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
