#if canImport(Glibc)
    import Glibc
#endif

/// Hands the pages the allocator keeps after a mass of frees back to the system. glibc's `malloc`
/// keeps freed memory for reuse (a second wave of the same size costs nothing more), so a process that
/// once held many short-lived objects stays at its peak resident size; `malloc_trim(0)` returns every
/// whole free page of every arena. Looked up by name, so a libc without it (musl, Darwin) simply
/// keeps its pages.
package enum FreedMemory {
    #if canImport(Glibc)
        private typealias Trim = @convention(c) (Int) -> Int32
        private static let trim: Trim? = dlsym(nil, "malloc_trim").map { unsafeBitCast($0, to: Trim.self) }
    #endif

    /// Returns the allocator's free pages to the system a second from now (what other threads still
    /// release of the objects just dropped is free by then), on a thread of its own (a large heap takes
    /// some milliseconds to walk). Does nothing where the libc has no such call.
    package static func returnToSystem() {
        #if canImport(Glibc)
            guard let trim else { return }
            OwnThread.start {
                OwnThread.sleep(for: .seconds(1))
                _ = trim(0)
            }
        #endif
    }
}
