/// The gist of a Swift runtime crash report (what a crashed child wrote to its standard error): the line
/// saying what crashed and the first frame of the crashed thread, each at most 200 characters.
package enum CrashReport {
    /// "what crashed — frame 0 of the crashed thread"; the first line when neither is there; "an empty
    /// report" when there is nothing.
    package static func summary(_ text: String) -> String {
        let lines = text.split(separator: "\n").map { String($0.trimming(" \t")) }.filter { !$0.isEmpty }
        let what = lines.first { $0.contains("crashed") || $0.contains("Fatal error") } ?? lines.first ?? "an empty report"
        let thread = lines.firstIndex { $0.hasPrefix("Thread ") && $0.hasSuffix("crashed:") }
        let frame = thread.flatMap { $0 + 1 < lines.count ? lines[$0 + 1] : nil }
        return ([what] + (frame.map { [$0] } ?? [])).map { String($0.prefix(200)) }.joined(separator: " — ")
    }
}
