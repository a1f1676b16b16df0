/// Results as JUnit XML, the format CI systems (GitHub Actions reporters, GitLab, Jenkins) read.
struct JUnitReport {
    /// One test case: a scenario or a trace.
    struct Case {
        /// Its name.
        var name: String
        /// The file it came from.
        var file: String
        /// How long it took, in seconds.
        var seconds: Double
        /// How it ended.
        var outcome: Outcome
    }

    /// How a case ended.
    enum Outcome {
        /// As expected.
        case passed
        /// It ran and did not do what was expected (JUnit `failure`): a summary and the report.
        case failed(String, String)
        /// It could not run (JUnit `error`): the input was unreadable or invalid; a summary and the report.
        case error(String, String)
    }

    /// The suite's name (`entitle run`).
    var suite: String
    /// The cases, in order.
    var cases: [Case] = []

    /// The XML document.
    var xml: String {
        let failures = cases.filter { if case .failed = $0.outcome { true } else { false } }.count
        let errors = cases.filter { if case .error = $0.outcome { true } else { false } }.count
        let total = cases.reduce(0) { $0 + $1.seconds }
        let counts = "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\" time=\"\(Self.seconds(total))\""
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"\(Self.escape(suite))\" \(counts)>\n"
        out += "  <testsuite name=\"\(Self.escape(suite))\" \(counts)>\n"
        for item in cases {
            let opening = "    <testcase classname=\"\(Self.escape(suite))\" name=\"\(Self.escape(item.name))\" file=\"\(Self.escape(item.file))\" time=\"\(Self.seconds(item.seconds))\""
            switch item.outcome {
            case .passed:
                out += opening + "/>\n"
            case .failed(let summary, let report):
                out += opening + ">\n      <failure message=\"\(Self.escape(summary))\">\(Self.escape(report))</failure>\n    </testcase>\n"
            case .error(let summary, let report):
                out += opening + ">\n      <error message=\"\(Self.escape(summary))\">\(Self.escape(report))</error>\n    </testcase>\n"
            }
        }
        out += "  </testsuite>\n</testsuites>\n"
        return out
    }

    /// Seconds with millisecond precision, as JUnit writes them.
    static func seconds(_ value: Double) -> String {
        let milliseconds = Int((max(0, value) * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// `text` safe in XML 1.0 attribute values and content: markup characters escaped, line breaks
    /// and tabs as character references (an attribute keeps them), characters XML cannot hold (the
    /// other C0 controls, U+FFFE, U+FFFF) replaced by U+FFFD.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value): out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
