/// A value behind one reference that is copied only when it is written while shared: copying the
/// holder costs one reference, however large the value.
///
/// The machine keeps the fields an input seldom writes this way. The engine decides each step on a
/// copy of the machine (a step whose save fails is dropped whole): a step that writes none of them —
/// most calls answered from what the machine holds — then copies a few words, and a step that writes
/// one copies them once.
struct CopyOnWrite<Value: Sendable>: Sendable {
    /// The value's one home. Written only through ``CopyOnWrite/value`` while this holder alone refers to it,
    /// so no two holders — nor two threads — ever see a write; access to a holder is checked where the
    /// holder lives (a struct's, an actor's or a class's own rules), and the box adds no check of its own.
    private final class Box: @unchecked Sendable {
        @exclusivity(unchecked) var value: Value

        init(_ value: Value) { self.value = value }
    }

    private var box: Box

    init(_ value: Value) { box = Box(value) }

    /// The value: read in place; written in place when this holder alone refers to it, else on a copy
    /// made first.
    var value: Value {
        _read { yield box.value }
        _modify {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
            yield &box.value
        }
    }

    /// Whether both holders refer to one value (neither was written since one was copied from the other).
    func sharesStorage(with other: CopyOnWrite) -> Bool { box === other.box }
}
