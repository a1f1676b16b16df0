import EntitlementEngine
extension StateChart {
    /// One detailed chart: a whole region, or a group of a region's states that the overview draws
    /// as one composite state (the login flow, the platform picker, the second screen, logout).
    /// Each row of the table is drawn in exactly one part: the part of the state it leaves.
    package struct Part: Sendable, Hashable {
        /// The chart's name: its file is `StateCharts/<name>.md`.
        package let name: String
        /// The region its states belong to.
        package let region: TransitionRow.Region
        /// The states whose rows it draws, in the region's order.
        package let states: [String]
        /// What the overview writes in the composite state.
        package let title: String

        /// Whether the overview draws the part as one state (a group, not a whole region or its top level).
        package var isComposite: Bool { !states.contains(region.initialState) }

        /// The overview's name for the composite state (`platform-picker` → `platformPicker`).
        package var node: String {
            let words = name.split(separator: "-")
            return String(words[0]) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        }

        /// The rows it draws: those leaving one of its states, in table order.
        package var rows: [TransitionRow] { TransitionTable.rows(of: region).filter { states.contains($0.from) } }

        /// Where the chart starts: the region's initial state when it is one of the part's, else the
        /// states the rest of the region enters it by.
        package var entries: [String] {
            if states.contains(region.initialState) { return [region.initialState] }
            let entered = Set(TransitionTable.rows(of: region).filter { !states.contains($0.from) && states.contains($0.to) }.map(\.to))
            return states.filter(entered.contains)
        }

        /// Every part, in the order the charts are listed: together they draw every row once.
        package static let all: [Part] = [
            Part(name: "configuration", region: .configuration, states: TransitionRow.Region.configuration.states, title: "configuration"),
            Part(name: "authentication", region: .authentication, states: ["unknown", "unauthenticated", "authenticated"], title: "authentication"),
            Part(
                name: "login", region: .authentication,
                states: ["selectingProvider", "preparingLogin", "creatingSession", "awaitingRedirect", "readingProfile"],
                title: "the login flow (login.md)"),
            Part(name: "platform-picker", region: .authentication, states: ["requestingPartnerSession", "platformPicking"], title: "the platform's picker (platform-picker.md)"),
            Part(name: "second-screen", region: .authentication, states: ["awaitingSecondScreen"], title: "a code on a second screen (second-screen.md)"),
            Part(
                name: "logout", region: .authentication, states: ["preparingLogout", "requestingLogout", "loggingOut"],
                title: "logout (logout.md)"),
            Part(name: "authorization", region: .authorization, states: ["idle", "waitingForAuthentication", "authorizing"], title: "authorization"),
            Part(
                name: "providers", region: .authorization, states: ["askingProvider", "waitingForProvider", "awaitingStepUp"],
                title: "a provider of the chain (providers.md)"),
            Part(name: "calls", region: .calls, states: TransitionRow.Region.calls.states, title: "calls"),
            Part(name: "entitlements", region: .entitlements, states: TransitionRow.Region.entitlements.states, title: "entitlements"),
            Part(name: "accounts", region: .accounts, states: TransitionRow.Region.accounts.states, title: "accounts"),
        ]

        /// The regions the overview draws (the calls region's two states are in its own chart).
        package static let overviewRegions: [TransitionRow.Region] = [.configuration, .authentication, .authorization]

        /// The part called `name`.
        package static func named(_ name: String) -> Part? { all.first { $0.name == name } }
    }
}
