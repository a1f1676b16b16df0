/// The HTTP client a transport's exchanges run on.
public enum HTTPStack: Sendable, Hashable, CustomStringConvertible {
    /// libcurl's multi interface, driven by one thread of the transport's own (the libcurl
    /// FoundationNetworking links, opened at run time): no Dispatch source, no `URLSession`.
    case libcurl
    /// Foundation's `URLSession` (on Linux, FoundationNetworking's, itself on libcurl with Dispatch sources).
    case urlSession

    /// `libcurl` on Linux, where FoundationNetworking's `URLSession` is reported to crash in libdispatch on
    /// connection teardown, cancellation and timeouts (swift-corelibs-foundation #4791, #5469);
    /// `urlSession` on Apple's systems.
    public static var platformDefault: HTTPStack {
        #if canImport(FoundationNetworking)
            .libcurl
        #else
            .urlSession
        #endif
    }

    /// `libcurl` or `URLSession`.
    public var description: String {
        switch self {
        case .libcurl: "libcurl"
        case .urlSession: "URLSession"
        }
    }
}
