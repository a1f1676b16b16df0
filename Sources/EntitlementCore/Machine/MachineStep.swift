/// What the machine decided for one input (`EntitlementMachine.handle(_:at:)`), cut by what the shell
/// must do with each part — the machine–shell contract as a type, not as an order the shell has to know:
///
/// 1. ``save``: the tokens to save first (a compare-and-set); the step holds only once the save does,
///    and nothing else of it is done before.
/// 2. ``effects``: then, in order — callbacks, backend requests, provider and platform questions,
///    timers, log lines.
/// 3. ``secretsToDraw``: flows whose `state` the shell draws at once and feeds back
///    (`Input.flowSecretsDrawn(_:_:)`), in order, before any other input.
/// 4. ``resubmitted``: held calls fed back, in order, ahead of all queued work (each runs as its own input).
/// 5. ``storeFollowing``: when the step changed it, whose stored tokens the shell now follows (reads
///    before every input, and saves against) — the shell keeps it and never asks the machine's state.
package struct MachineStep: Sendable, Hashable {
    /// Whose stored tokens the machine's view follows from this step on.
    package enum StoreFollowing: Sendable, Hashable {
        /// The requestor's, now configured: read them before every input when their version changed.
        case follow(requestorID: String)
        /// None: the machine left its configuration (configuring again, or failed); nothing is read.
        case stop
    }
    /// A save of the device's tokens for one requestor.
    package struct Save: Sendable, Hashable {
        /// The tokens, behind one reference: a step (made for every input) stays a few words.
        private var box: Boxed<StoredTokens>
        /// The tokens to store.
        package var tokens: StoredTokens {
            get { box.value }
            set { box = Boxed(newValue) }
        }
        /// The requestor they are stored for.
        package var requestorID: String

        /// Creates a save.
        package init(tokens: StoredTokens, requestorID: String) {
            self.init(box: Boxed(tokens), requestorID: requestorID)
        }

        /// Creates a save of the tokens in `box` (shared with the machine's saved snapshot: neither writes it).
        init(box: Boxed<StoredTokens>, requestorID: String) {
            self.box = box
            self.requestorID = requestorID
        }

        /// Saves are equal when their tokens and requestor are.
        package static func == (left: Save, right: Save) -> Bool {
            left.requestorID == right.requestorID && (left.box === right.box || left.tokens == right.tokens)
        }

        /// Hashes the tokens and the requestor.
        package func hash(into hasher: inout Hasher) {
            hasher.combine(tokens)
            hasher.combine(requestorID)
        }
    }

    /// The save that must hold before anything else of the step is done, if the input changed what is stored.
    package var save: Save?
    /// What to do, in order, once the save holds.
    package var effects: [Action]
    /// The flows whose secrets are drawn and fed back before any other input.
    package var secretsToDraw: [FlowID]
    /// The held calls fed back ahead of all queued work.
    package var resubmitted: [EntitlementMachine.QueuedCall]

    /// Set only by the step that began or ended following a requestor's stored tokens.
    package var storeFollowing: StoreFollowing?

    /// Creates a step.
    package init(
        save: Save? = nil, effects: [Action] = [], secretsToDraw: [FlowID] = [], resubmitted: [EntitlementMachine.QueuedCall] = []
    ) {
        self.save = save
        self.effects = effects
        self.secretsToDraw = secretsToDraw
        self.resubmitted = resubmitted
    }

    /// Whether the step does nothing at all.
    package var isEmpty: Bool { save == nil && effects.isEmpty && secretsToDraw.isEmpty && resubmitted.isEmpty }
}
