/// The engine's semantic version, written in every trace header.
public enum EngineVersion {
    /// The current version.
    public static let current = "0.1.0"
}
