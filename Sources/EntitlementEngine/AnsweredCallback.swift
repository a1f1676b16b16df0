/// A callback with the calls it answers, as ``AccessEnabler/answeredCallbacks(bufferLimit:)`` streams it.
public struct AnsweredCallback: Sendable, Hashable {
    /// The callback.
    public var callback: Callback
    /// The ids of the calls it answers: one for most terminal callbacks, several when calls joined a
    /// running flow, none for a callback that answers no call (`navigateToUrl`, tracking data, notices).
    public var answering: [CallID]

    /// Creates one.
    package init(callback: Callback, answering: [CallID]) {
        self.callback = callback
        self.answering = answering
    }
}

extension AnsweredCallback: CustomStringConvertible, CustomDebugStringConvertible {
    /// The callback as ``Callback/redactedDescription`` gives it, then the calls it answers:
    /// `setAuthenticationStatus(1, "") answers #2, #3`.
    public var description: String {
        answering.isEmpty ? callback.redactedDescription : callback.redactedDescription + " answers " + answering.map(\.description).joined(separator: ", ")
    }
    /// ``description``.
    public var debugDescription: String { description }
}
