import EntitlementSupport
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
        out += "<testsuites name=\"\(suite.markupEscaped)\" \(counts)>\n"
        out += "  <testsuite name=\"\(suite.markupEscaped)\" \(counts)>\n"
        for item in cases {
            let opening = "    <testcase classname=\"\(suite.markupEscaped)\" name=\"\(item.name.markupEscaped)\" file=\"\(item.file.markupEscaped)\" time=\"\(Self.seconds(item.seconds))\""
            switch item.outcome {
            case .passed:
                out += opening + "/>\n"
            case .failed(let summary, let report):
                out += opening + ">\n      <failure message=\"\(summary.markupEscaped)\">\(report.markupEscaped)</failure>\n    </testcase>\n"
            case .error(let summary, let report):
                out += opening + ">\n      <error message=\"\(summary.markupEscaped)\">\(report.markupEscaped)</error>\n    </testcase>\n"
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

}
