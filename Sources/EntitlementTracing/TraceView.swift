import EntitlementEngine
import EntitlementSupport

/// A trace as one self-contained HTML page for the person on call: a summary, the records in time order
/// in lanes (calls, callbacks with the calls they answer, backend requests and answers with their
/// latency, redirects — the device sent to a page and brought back — timers, storage), and beside them
/// where each region of today's machine stands after the record in focus, with the rows the record took. Keys (↑ ↓, j k, Home End), a click on a
/// record, or the slider move the focus. Nothing is fetched: no script, font or image comes from
/// anywhere else, and the page shows only what the trace holds (secrets and personal data stay the
/// placeholders the trace has) and the machine's state names.
///
/// The states are today's machine's, replaying the trace. With `markingDivergence`, the first record
/// where today's code does something else is marked, the recorded and today's records side by side;
/// past it nothing is replayed.
public enum TraceView {
    /// The regions drawn beside the records.
    static let regions: [TransitionRow.Region] = [.configuration, .authentication, .authorization]

    /// The page for `trace`; a `headline` (why the page was made: a failing scenario's report) is shown
    /// above the records.
    public static func html(_ trace: Trace, markingDivergence: Bool = false, headline: String? = nil) -> String {
        var steps: [TraceReplayStep] = []
        let result = TraceReplayer().replay(trace) { steps.append($0) }
        let divergence = markingDivergence ? result.divergence : nil
        let lanes = trace.records.map(Lane.init)
        let latencies = latencies(of: trace)
        var page = head(trace)
        if let headline { page += "<section class=\"headline\" role=\"alert\"><pre>\(headline.markupEscaped)</pre></section>\n" }
        page += "<main>\n<section class=\"records\" aria-label=\"Records\">\n"
        page += "<input type=\"range\" id=\"scrub\" min=\"1\" max=\"\(max(1, trace.records.count))\" value=\"1\" aria-label=\"Record in focus\">\n"
        page += "<table>\n<thead><tr><th>seq</th><th>time</th><th>lane</th><th>record</th></tr></thead>\n<tbody>\n"
        let start = trace.header["start"]?.int ?? 0
        for (index, record) in trace.records.enumerated() {
            let seq = index + 1
            let time = record["t"]?.int.map { "+\(Saturating.subtract($0, start)) ms" } ?? ""
            let diverges = divergence?.step == seq
            var text = TraceTranscript.describe(record)
            if let latency = latencies[seq] { text += "  (answered in \(latency) ms)" }
            page += "<tr data-seq=\"\(seq)\" class=\"lane-\(lanes[index].rawValue)\(diverges ? " divergence" : "")\" tabindex=\"-1\">"
            page += "<td>\(seq)</td><td>\(time.markupEscaped)</td><td>\(lanes[index].label)</td><td>\(text.markupEscaped)"
            if diverges, let divergence {
                page += "<div class=\"diverged\"><strong>Today's code diverges here.</strong>"
                page += "<div class=\"sides\"><div><h3>recorded</h3><pre>\(divergence.expected.markupEscaped)</pre></div>"
                page += "<div><h3>today</h3><pre>\(divergence.actual.markupEscaped)</pre></div></div></div>"
            }
            page += "</td></tr>\n"
        }
        if let divergence, divergence.step > trace.records.count {
            page += "<tr class=\"divergence past-end\"><td colspan=\"4\"><strong>Today's code goes on past the trace's end:</strong>"
            page += "<pre>\(divergence.actual.markupEscaped)</pre></td></tr>\n"
        }
        page += "</tbody>\n</table>\n</section>\n"
        page += statePanel()
        page += "</main>\n"
        page += "<script type=\"application/json\" id=\"steps\">\(stepsJSON(steps))</script>\n"
        page += "<script type=\"application/json\" id=\"next\">\(nextJSON)</script>\n"
        page += "<script>\(script)</script>\n</body>\n</html>\n"
        return page
    }

    // MARK: - Lanes

    /// The lane of a record.
    enum Lane: String {
        case call, callback, request, answer, redirect, timer, storage, input

        init(_ record: JSONValue) {
            switch (record["in"]?.string, record["out"]?.string) {
            case ("call", _) where record["call"]?.string == "handleExternalURL": self = .redirect
            case (_, "callback") where record["callback"]?.string == "navigateToUrl": self = .redirect
            case ("call", _), ("callNotSaved", _), ("callNotRead", _): self = .call
            case (_, "callback"): self = .callback
            case (_, "request"), (_, "provider"): self = .request
            case ("backendAnswered", _), ("backendFailed", _), ("configurationLoaded", _), ("configurationFailed", _),
                ("providerAnswered", _), ("platformSignInChecked", _):
                self = .answer
            case ("timerFired", _): self = .timer
            case ("storageChanged", _), ("storageWriteFailed", _), ("renewalNotMarked", _): self = .storage
            default: self = .input
            }
        }

        /// The lane's name with its mark, readable without colour.
        var label: String {
            switch self {
            case .call: "&gt; call"
            case .callback: "&lt; callback"
            case .request: "⇢ request"
            case .answer: "⇠ answer"
            case .redirect: "↪ redirect"
            case .timer: "⏱ timer"
            case .storage: "▤ storage"
            case .input: "· input"
            }
        }
    }

    /// Each answer's latency in trace time, by its `seq`: from the input after which its request was sent.
    static func latencies(of trace: Trace) -> [Int: Int64] {
        var lastInputTime: Int64?
        var sentAt: [Int64: Int64] = [:]
        var latencies: [Int: Int64] = [:]
        for (index, record) in trace.records.enumerated() {
            if record["out"]?.string == "request", let op = record["op"]?.int, let lastInputTime { sentAt[op] = lastInputTime }
            guard let time = record["t"]?.int else { continue }
            if Lane(record) == .answer, let op = record["op"]?.int, let sent = sentAt.removeValue(forKey: op) {
                latencies[index + 1] = Saturating.subtract(time, sent)
            }
            lastInputTime = time
        }
        return latencies
    }

    // MARK: - Summary

    private static func head(_ trace: Trace) -> String {
        let records = trace.records
        let start = trace.header["start"]?.int ?? 0
        let end = records.compactMap { $0["t"]?.int }.max() ?? start
        let requestor = records.first { $0["call"]?.string == "setRequestor" }?["requestor"]?.string ?? "?"
        let calls = records.filter { $0["in"]?.string == "call" }
        var outcomes: [String: Int] = [:]
        var answered = Set<Int64>()
        for record in records where record["out"]?.string == "callback" {
            for id in record["answers"]?.array?.compactMap(\.int) ?? [] where answered.insert(id).inserted {
                outcomes[record["callback"]?.string ?? "?", default: 0] += 1
            }
        }
        let unanswered = calls.compactMap { $0["id"]?.int }.filter { !answered.contains($0) }.count
        let outcomeText = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            + (unanswered > 0 ? (outcomes.isEmpty ? "" : ", ") + "unanswered \(unanswered)" : "")
        func field(_ name: String, _ value: String) -> String { "<dt>\(name)</dt><dd>\(value.markupEscaped)</dd>" }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Trace of \(trace.deviceID.markupEscaped) · \(requestor.markupEscaped)</title>
            <style>\(style)</style>
            </head>
            <body>
            <header>
            <h1>Trace of \(trace.deviceID.markupEscaped) · \(requestor.markupEscaped)</h1>
            <dl>\(field("engine", trace.header["engine"]?.string ?? "?"))\(field("format", trace.header["format"]?.string ?? "?"))\(field("recorded with", trace.header["recorded_with"]?.string ?? "?"))\(field("duration", "\(Saturating.subtract(end, start)) ms"))\(field("records", "\(records.count)"))\(field("calls", "\(calls.count)"))\(field("outcomes", outcomeText.isEmpty ? "none" : outcomeText))</dl>
            <p class="help">↑ ↓ (or j k), Home, End, a click or the slider move the focus; beside the records, where today's machine stands after it (a thick box), the states its rows lead to from there (dashed), and the rows the record took.</p>
            </header>

            """
    }

    // MARK: - States

    /// The charts of the regions, every state a box; the script marks the current ones.
    private static func statePanel() -> String {
        var panel = "<section class=\"states\" aria-label=\"Where the machine stands\">\n<p id=\"focus\" aria-live=\"polite\"></p>\n"
        let columns = 2, width = 190, height = 26, gap = 6
        for region in regions {
            let states = region.states
            let rows = (states.count + columns - 1) / columns
            panel += "<h2>\(region.rawValue)</h2>\n<p class=\"current-text\" data-region=\"\(region.rawValue)\"></p>\n"
            panel += "<svg role=\"img\" aria-label=\"\(region.rawValue) states\" viewBox=\"0 0 \(columns * (width + gap)) \(rows * (height + gap))\" width=\"100%\">\n"
            for (index, state) in states.enumerated() {
                let x = (index % columns) * (width + gap), y = (index / columns) * (height + gap)
                panel += "<g class=\"state\" data-region=\"\(region.rawValue)\" data-state=\"\(state)\">"
                panel += "<rect x=\"\(x)\" y=\"\(y)\" width=\"\(width)\" height=\"\(height)\" rx=\"6\"></rect>"
                panel += "<text x=\"\(x + 10)\" y=\"\(y + 17)\">\(state)</text></g>\n"
            }
            panel += "</svg>\n"
        }
        panel += "<h2>rows taken</h2>\n<ul id=\"rows\"></ul>\n</section>\n"
        return panel
    }

    /// For each region, the states each state's rows lead to (itself left out): the chart marks them
    /// beside the current state.
    static var nextJSON: String {
        var regions: [String: JSONValue] = [:]
        for region in Self.regions {
            var next: [String: [String]] = [:]
            for row in TransitionTable.rows(of: region) where row.from != row.to && !(next[row.from]?.contains(row.to) ?? false) {
                next[row.from, default: []].append(row.to)
            }
            regions[region.rawValue] = .object(next.mapValues { .array($0.map(JSONValue.string)) })
        }
        return JSONValue.object(regions).canonicalText
    }

    /// The replay's steps as JSON for the script, with `<` escaped so no text can close the script.
    private static func stepsJSON(_ steps: [TraceReplayStep]) -> String {
        let values: [JSONValue] = steps.map { step in
            [
                "seq": .int(Int64(step.seq)), "configuration": .string(step.configuration), "authentication": .string(step.authentication),
                "authorization": .array(step.authorizations.map { ["resource": .string($0.resource), "state": .string($0.state)] }),
                "rows": .array(step.rows.map { .string($0) }),
            ]
        }
        return JSONValue.array(values).canonicalText.replacingOccurrences(of: "<", with: "\\u003c")
    }

    private static let style = """
        body{font-family:system-ui,sans-serif;margin:0;padding:0 1rem;color:#111;background:#fff}
        header dl{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;margin:.5rem 0}header dt{font-weight:600}header dd{margin:0}
        .help{color:#444;font-size:.9rem}
        .headline pre{white-space:pre-wrap;border-left:6px solid #b3261e;background:#fde7e9;padding:.5rem;margin:.5rem 0}
        main{display:grid;grid-template-columns:minmax(0,3fr) minmax(16rem,2fr);gap:1rem;align-items:start}
        @media (max-width:800px){main{grid-template-columns:1fr}}
        .records{overflow-x:auto}#scrub{width:100%}
        table{border-collapse:collapse;width:100%;font-size:.85rem}
        th,td{text-align:left;padding:.2rem .4rem;border-bottom:1px solid #ddd;vertical-align:top}
        td:last-child{word-break:break-all;font-family:ui-monospace,monospace}
        tr.focus{outline:3px solid #0b57d0;background:#e8f0fe}tr.focus td:first-child::before{content:"▶ "}
        tr.lane-call td:nth-child(3),tr.lane-callback td:nth-child(3),tr.lane-redirect td:nth-child(3){font-weight:600}
        tr.divergence{background:#fde7e9}.diverged{margin-top:.3rem}.sides{display:flex;flex-wrap:wrap;gap:.5rem}
        .sides>div{flex:1 1 16rem}.sides pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.3rem}
        .states{position:sticky;top:0}.states h2{font-size:1rem;margin:.6rem 0 .2rem}
        .state rect{fill:#fff;stroke:#888;stroke-width:1}.state text{font-size:13px;fill:#222}
        .state.current rect{fill:#e8f0fe;stroke:#0b57d0;stroke-width:4}.state.current text{font-weight:700}
        .state.next rect{stroke:#0b57d0;stroke-dasharray:5 3;stroke-width:2}.state.next text{font-style:italic}
        #rows{font-family:ui-monospace,monospace;font-size:.8rem;padding-left:1.2rem}
        """

    private static let script = """
        (function(){
        var steps=JSON.parse(document.getElementById('steps').textContent);
        var next=JSON.parse(document.getElementById('next').textContent);
        var rows=Array.prototype.slice.call(document.querySelectorAll('tr[data-seq]'));
        var scrub=document.getElementById('scrub');var current=0;
        function show(i){
        if(rows.length===0)return;i=Math.max(0,Math.min(rows.length-1,i));
        if(rows[current])rows[current].classList.remove('focus');current=i;var row=rows[i];row.classList.add('focus');
        row.scrollIntoView({block:'nearest'});scrub.value=String(i+1);
        var step=i<steps.length?steps[i]:null;
        document.getElementById('focus').textContent='record '+(i+1)+(step?'':' (not replayed: past the divergence)');
        var marks={configuration:step?[step.configuration]:[],authentication:step?[step.authentication]:[],
        authorization:step?(step.authorization.length?step.authorization.map(function(a){return a.state;}):['idle']):[]};
        var reachable={};Object.keys(marks).forEach(function(r){reachable[r]=[];marks[r].forEach(function(s){
        reachable[r]=reachable[r].concat((next[r]||{})[s]||[]);});});
        document.querySelectorAll('g.state').forEach(function(g){
        var r=g.dataset.region,on=marks[r].indexOf(g.dataset.state)>=0;g.classList.toggle('current',on);
        g.classList.toggle('next',!on&&reachable[r].indexOf(g.dataset.state)>=0);
        if(on)g.setAttribute('aria-current','step');else g.removeAttribute('aria-current');});
        document.querySelectorAll('.current-text').forEach(function(p){var r=p.dataset.region;
        p.textContent=!step?'—':r==='authorization'&&step.authorization.length?step.authorization.map(function(a){return a.resource+': '+a.state;}).join(', '):marks[r].join(', ');});
        var list=document.getElementById('rows');list.innerHTML='';
        (step?step.rows:[]).forEach(function(text){var li=document.createElement('li');li.textContent=text;list.appendChild(li);});}
        rows.forEach(function(row,i){row.addEventListener('click',function(){show(i);});});
        scrub.addEventListener('input',function(){show(Number(scrub.value)-1);});
        document.addEventListener('keydown',function(e){
        var k=e.key;if(k==='ArrowDown'||k==='j'){show(current+1);}else if(k==='ArrowUp'||k==='k'){show(current-1);}
        else if(k==='Home'){show(0);}else if(k==='End'){show(rows.length-1);}else{return;}e.preventDefault();});
        show(0);})();
        """
}
