import EntitlementEngine
import EntitlementFuzzing
import EntitlementTracing

/// The help of one `entitle` command: `entitle help COMMAND` and `entitle COMMAND --help` print it,
/// `entitle help` lists every command's summary.
struct CommandHelp {
    /// The command's name (`run`, `bench`).
    let name: String
    /// Its synopsis lines, without `entitle `.
    let synopsis: [String]
    /// One line for the list of commands.
    let summary: String
    /// What it does, its options and its exit status.
    let details: String

    /// The whole help of this command.
    var text: String {
        "usage: " + synopsis.map { "entitle " + $0 }.joined(separator: "\n       ") + "\n\n" + details
    }

    /// The commands, in the order `entitle help` lists them.
    static let all: [CommandHelp] = [
        CommandHelp(
            name: "demo", synopsis: ["demo"], summary: "run cookbook flows B to I, then J (beyond TV providers), on the embedded simulator",
            details: """
                Runs cookbook flows B to I (startup, login, platform SSO, second screen, authorization,
                view media, logout), then J (a provider chain: a direct subscription, the programmer's
                own service with a PIN step-up, the TV provider) against the embedded simulator and
                prints the transcript, secrets shortened. Exit status 0 when every flow ends as
                expected, 1 otherwise.
                """),
        CommandHelp(
            name: "run", synopsis: ["run [--over-http] [--junit FILE] [--html DIR] PATH..."],
            summary: "run scenario scripts: one line each, failure reports, a summary",
            details: """
                Runs .scenario files (folders are searched recursively): one line per scenario, a report
                for each failure, then "N passed, N failed". A file beginning `fleet check` is a fleet
                script, as `entitle check` prints a broken promise: its events are played on the check's
                model, and it passes when every promise is kept.

                  --over-http   the engine talks REST API V2 over HTTP to the simulator served on an
                                ephemeral loopback port (as `entitle serve` serves it)
                  --junit FILE  also write the results as JUnit XML for a CI system
                  --html DIR    for each failing scenario, its run as a page (entitle trace view) in
                                DIR/NAME.html (DIR is made if missing), the failure report at its top:
                                a red CI run links a picture

                Exit status: 0 all passed; 1 a scenario failed; 2 a script does not parse (every
                parse error is listed); 66 a PATH does not exist or cannot be read; 73 a page cannot
                be written.
                """),
        CommandHelp(
            name: "serve", synopsis: ["serve [--port N] [--world FILE] [--no-throttle] [--quiet] [--max-connections N]"],
            summary: "serve the simulator over HTTP on 127.0.0.1",
            details: """
                Serves the simulator on http://127.0.0.1:N: REST API V2, client registration, the MVPDs'
                login and logout pages, the second screen's /activate page and, when the world declares
                them, the providers beside the TV provider (your own authorization service at
                /programmer/ID/authorize, a subscription's Security API under /security-api/ID/).
                Prints its URL, the world's users, those providers' URLs and subscribers, then one
                access-log line per request (secrets shortened). Stops cleanly on Ctrl-C or SIGTERM.

                  --port N       the port (default 8080; 0 picks a free one)
                  --world FILE   scenario-language declarations (world, requestor, mvpd, user,
                                 provider, subscriber, set session-ttl) instead of the default world
                  --no-throttle  no REST API V2 throttling (burst 10, then 1 request/s per device)
                  --quiet        no access log
                  --max-connections N
                                 connections served at once (default 512); at the limit the
                                 quietest idle or slow connection is closed to make room, and only
                                 when every one is being answered is a new one answered 503

                Exit status: 0 stopped by a signal; 2 the world file does not parse; 66 it cannot be
                read; 69 the port cannot be used.
                """),
        CommandHelp(
            name: "register", synopsis: ["register --adobe URL --statement FILE --store STORE"],
            summary: "register a software statement once and store the client credentials",
            details: """
                Registers the software statement (from Adobe's TVE Dashboard) with REST API V2 at URL
                (AdobePassHost's, or entitle serve's) and keeps the client credentials in STORE, where
                every node of the service reads them: redis://HOST:PORT[/DB] (a standalone server or any
                node of a cluster; the fleet's RedisV2CredentialStore) or file:PATH (a
                FileV2CredentialStore). Prints the client id only. Credentials already stored are kept
                and nothing is registered: registering again makes a new client, and the users'
                profiles belong to the old one.

                  --adobe URL         the service's base URL
                  --statement FILE    the software statement's file, or - for standard input
                  --store STORE       redis://HOST:PORT[/DB] or file:PATH

                Exit status: 0 registered or already registered; 1 the service refused or failed;
                2 the statement is empty; 64 usage; 66 the statement cannot be read; 69 Redis cannot
                be used.
                """),
        CommandHelp(
            name: "record", synopsis: ["record [--keep-personal-data] SCENARIO -o TRACE"],
            summary: "run a scenario and write its trace",
            details: """
                Runs a scenario and writes its trace (JSON Lines, secrets and personal data as
                placeholders) to TRACE. A trace records one engine: `main`, up to its first restart.
                  --keep-personal-data   write device ids, profile attributes and user ids in clear
                                         (for local debugging only)
                Exit status: 0 recorded; 1 recorded, but the scenario failed; 2 the script does not
                parse; 66 it cannot be read; 73 TRACE cannot be written.
                """),
        CommandHelp(
            name: "replay", synopsis: ["replay [--expect-divergence] [--junit FILE] TRACE..."],
            summary: "replay traces against this engine",
            details: """
                Replays every trace against this engine; each stops at its first divergence, which is
                printed with its step.

                  --expect-divergence  every trace must diverge (the .divergent traces of a test suite);
                                       one that replays cleanly is the failure
                  --junit FILE         also write the results as JUnit XML for a CI system

                Exit status: 0 as expected; 1 a trace diverged (or, with --expect-divergence, did not);
                2 a trace is not a valid trace; 66 a TRACE cannot be read.
                """),
        CommandHelp(
            name: "trace", synopsis: ["trace show TRACE", "trace view TRACE [--replay] -o FILE.html"],
            summary: "print a trace as a readable transcript, or write it as a page",
            details: """
                show prints a trace as a readable transcript.
                view writes one self-contained HTML page (it fetches nothing): the records in lanes,
                and beside them where today's machine stands after the record in focus (keys, a click
                or the slider move it), with the rows the record took.
                  --replay     mark the first record where today's code diverges, the recorded and
                               today's records side by side

                Exit status: 0 printed or written; 2 not a valid trace; 66 TRACE cannot be read; 73
                FILE cannot be written.
                """),
        CommandHelp(
            name: "chart", synopsis: ["chart [--format mermaid|dot|scxml] [--chart NAME]", "chart --write DIR"],
            summary: "print or rewrite the state charts generated from the transition table",
            details: """
                Prints the state charts generated from the machine's transition table: the overview (the
                regions, with the login flow, platform picker, second screen and logout as one state each),
                then the detailed charts (\(StateChart.Part.all.map(\.name).joined(separator: ", "))); --chart NAME prints one.
                --format dot or scxml prints the whole machine for Graphviz or statechart tools instead.
                --write DIR rewrites the mermaid block of DIR/<chart>.md for every chart and refreshes
                the charts README.md shows. Exit status: 0 done; 66 a chart file cannot be read; 73 it
                cannot be written.
                """),
        CommandHelp(
            name: "bench",
            synopsis: [
                "bench engine [--sessions N] [--seconds S] [--only PART]... [--compare SAVED]",
                "bench gate BASELINE [--margin PERCENT] [--wall-margin PERCENT] [--rounds R] [--write]",
                "bench json|storage [--rounds N]",
                "bench serve [--logins N] [--clients C]",
                "bench redis [--seconds S]",
            ],
            summary: "measure (build with -c release for numbers worth quoting)",
            details: """
                  engine   the engine's figures in one run, as a table against their targets: a cookbook
                           session against the same simulator calls in straight-line code, the bare
                           machine, checkAuthentication through the actor, whole logins through a
                           host (32 devices at a time), N idle sessions in a host
                           (default 100,000, in a child process; the growth of its resident set per
                           session, with 1 % of them resident, then N/10 more that all stay resident;
                           few sessions give noisy figures), trace recording and replay, SHA-256,
                           media-token verification; S seconds per rate (default 1, each rate also
                           warms up, so a run takes several times S);
                           --only cookbook|machine|actor|host|sessions|replay|sha256|verify runs one part;
                           --compare SAVED shows a saved run's figures (its output, as printed) beside
                           today's; the machine's load average is printed with the table
                  gate     the speed regression gate (.ci/run runs it on the release build): same-run
                           ratios — a cookbook session on the engine against the same simulator calls in
                           straight-line code (shared pool, one thread), recording against not, and the
                           bare machine, checkAuthentication through the actor, streamed replay and
                           SHA-256 each against reference work of the standard library's — each of
                           process CPU and of wall-clock time, the ratio of medians over R alternating
                           rounds (default 101); a figure whose CPU ratio is worse than BASELINE's by more
                           than --margin (default 50 %), or whose wall-clock ratio is by more than
                           --wall-margin (default 400 %), in three measurements fails (exit 1); --write
                           measures each three times and writes their medians to BASELINE instead
                  json     time the canonical trace writer against JSONEncoder on the same records
                  storage  time calls on an engine whose file store holds 2,000 authorizations: the
                           stored version checked per input against a full read per input
                  serve    time entitle serve's start, then N whole logins (default 1000) from C
                           concurrent clients (default 50) against it over loopback HTTP
                  redis    the Redis token store's saves and loads per second on a standalone
                           redis-server and a six-node cluster it starts (redis-server, redis-cli and
                           redis-benchmark must be installed), beside redis-benchmark's figure for the
                           same commands with as many in flight (-c 4 -P 12 against 50 callers on 4
                           connections), three rounds of each alternated, S seconds a round (default 3)

                Build with -c release for numbers worth quoting. Exit status 0, or 1 when a run failed.
                """),
        CommandHelp(
            name: "explore", synopsis: ["explore [--seeds N] [--from S] [--length L] [--trace FILE]"],
            summary: "drive the engine through random sequences and check its invariants",
            details: """
                Drives the engine through N random sequences (default 1000) of L steps (default 40, at
                most 10000) from seed S (default 1) — each seed on a device with a web view, platform
                SSO, a second screen, or a provider chain before the TV provider — and checks its
                invariants: exactly once, listed transitions, nothing after the end, refusals change
                nothing, a fresh login works, the trace replays. At the first failure it prints the
                seed and a shortened script and exits 1; with --trace FILE it also writes the shortened
                script's trace there (secrets as placeholders; `entitle trace show FILE` reads it).
                """),
        CommandHelp(
            name: "check", synopsis: ["check [--nodes K] [--depth D] [--calls C] [--user U] [--faults F] [--second-screen | --step-up | --subscription] [--platform] [--authorize] [--preauthorize] [--lost-writes] [--late-answers] [--all]"],
            summary: "model-check a fleet: every interleaving up to a bound, every promise",
            details: """
                Explores every interleaving, up to D events (default 10), of K nodes (2 or 3, default 2)
                serving one device over one token store: C device calls (default 3: getAuthentication,
                setSelectedProvider, a cancel, checkAuthentication, logout, on any node), U user actions
                in the browser (default 2: log in, cancel at the provider, follow a logout page), the
                redirects they bring handed to any node (twice at most), backend answers in any order,
                timers and the clock, save notifications, and F faults (default 1: a failed request, the
                store down, a node restarted). States are pure machines and their shells, each explored
                once. It checks every call answered exactly once, every transition in the table, no
                sign-in after a logout or cancel, no status from a node for no call it holds, and, once
                everything settles, no call left waiting,
                every node agreeing with the store and, when nothing failed, a login the user completed
                in time signing the device in. It prints the states explored per depth, then the
                shortest interleaving that breaks a promise as a fleet script `entitle run` plays, its
                callbacks as comments (exit 1), or the states, depth and time (exit 0). With --all it goes on and prints the shortest interleaving of
                each kind of broken promise. With --second-screen the device is a TV showing registration
                codes (polled every 5 s, shown for a minute) that the user enters on a second screen. With
                --step-up the device's calls are getAuthorization of a PIN-protected resource, the app's
                completeStepUp (succeeded or failed) and logout, on any node, with the provider's answers
                (advice, the media token a transaction grants once) in any order; it also checks that no
                node asks for a step-up the store does not hold, no transaction is presented twice, and no
                media token granted after a logout for a step-up asked before it is handed out, and that no
                grant asked for before a logout is handed out after it (the provider also grants a second
                resource at once). With --subscription the device signs in to a direct subscription, reads
                its issue, signs out of it and logs out, on any node, the service forgetting its tokens among
                the user's actions; it also checks that each token is renewed once for the fleet and that no
                sign-in is reported whose token the store never held. With --platform the device has the
                platform's TV-provider account (cookbook D): a login starts at the platform's picker,
                where the user (a user action) signs in with the MVPD, picks another provider or
                cancels; the platform stays signed in, so a node's setRequestor signs the device in
                silently, and such a sign-in counts as a login. With --authorize the device also asks
                the TV provider's authorization of a channel (a login first when signed out); no node
                may hand out, after a logout, a media token decided before it. With --preauthorize it
                also pre-authorizes the channel (checkPreauthorizedResources, the cache allowed); no node
                may answer it with the channel permitted after a logout or cancel with no login since.
                With --lost-writes a
                fault may also be the store forgetting the last write it acknowledged (a Redis restarted
                without persistence): after one, the promises about what a node tells after a logout and
                a transaction's single use no longer bind (the store undid what they rest on); every
                other promise still does. With --late-answers a backend's answer (and a step-up's or a
                subscription's provider's) reaches its node as an event of its own after the service
                acted on the request: a logout through another node, a fault losing the answer (the
                service acted, the node sees the connection fail) or the node's deadline may come between.
                """),
        CommandHelp(
            name: "fleet",
            synopsis: ["fleet [--devices N] [--nodes K] [--faults F] [--seed S] [--concurrency C] [--skip KIND]... [--time-limit T] [--cluster] [--tls DIR]"],
            summary: "run a fleet of node processes on a real Redis under faults and check its promises",
            details: """
                Starts redis-server (it must be installed) on a free loopback port, the simulator on HTTP,
                and K node processes (default 3), each a SessionHost on REST API V2 over HTTP and the
                Redis token store. Drives N devices (default 200; C at a time, default 50) through whole
                journeys — a login through the MVPD's page (every fourth device a TV that logs in with a
                registration code on a second screen instead), an authorization, a logout through the
                MVPD's logout page; every eighth device instead authorizes a PIN-protected resource
                through the programmer's service, steps up (the PIN entered at the service's page) and
                reports it, and every eighth signs in to a direct subscription and reads two issues at once
                on two nodes, twice, the service forgetting its token between (one renewal for the
                fleet), then signs out (a sign-in refused PROVIDER_BUSY, its node still verifying a
                token made elsewhere, is made again a second later, for up to 12 s) — each request to
                a random node, while F faults of every kind (default 6) come on a schedule seeded by
                S: a node killed (SIGKILL) and restarted, Redis hung (SIGSTOP 5 s), Redis restarted
                empty and with its data, the simulator refusing or hanging for 5 s. Then, faults healed, every device logs in afresh, and the run checks:
                no request hung; no journey failed without a fault during it or in the 7 s before; every
                call a node accepted answered exactly once (calls lost with a killed node are counted
                apart); every node exits within 30 s of SIGTERM; every node answers each device alike; no
                secret (a password, a session code, a transaction id, a media token) in any node's log; the whole run
                ends within T seconds (default 1800). Prints a table and exits 0,
                or lists the violations (with a timeline and each failed journey's steps, and keeps the
                nodes' logs) and exits 1 (69 when redis-server cannot start). --skip KIND leaves a fault
                kind out: node-kill, redis-hang, redis-restart-empty, redis-restart-data, adobe-refuses,
                adobe-hangs. --cluster runs the nodes on a six-node Redis Cluster instead (redis-cli must be
                installed): its Redis faults hang one master (SIGSTOP 5 s, long enough for a failover) or
                SIGKILL one and start it again. --tls DIR puts stunnel (stunnel4 must be installed) in
                front of the simulator with DIR's server.crt and server.key (for localhost, signed by an
                authority the system trusts): the nodes talk REST API V2 to it over TLS.
                """),
        CommandHelp(
            name: "fuzz", synopsis: ["fuzz TARGET [--count N] [--seed S]"], summary: "run a fuzz target's long mode",
            details: """
                Runs N cases (default 10000) of a fuzz target from seed S (default 1) in a child process,
                so a crash is reported too. Prints the first failing seed and its input and exits 1.
                Targets: \(FuzzTargets.all.map(\.name).joined(separator: ", ")).
                """),
        CommandHelp(
            name: "help", synopsis: ["help [COMMAND]"], summary: "print this text, or one command's help",
            details: "Prints the list of commands, or COMMAND's usage, options and exit status."),
    ]

    /// The help of the command called `name`.
    static func named(_ name: String) -> CommandHelp? { all.first { $0.name == name } }

    /// `entitle help`: every command with its summary.
    static var overview: String {
        let width = all.map(\.name.count).max() ?? 0
        let lines = all.map { "  " + $0.name + String(repeating: " ", count: width + 2 - $0.name.count) + $0.summary }
        return """
            usage: entitle COMMAND [ARGS]
                   entitle --version

            commands:
            \(lines.joined(separator: "\n"))

            Run 'entitle help COMMAND' (or 'entitle COMMAND --help') for a command's options and exit status.
            """
    }
}
