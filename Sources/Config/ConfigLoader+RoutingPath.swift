extension ConfigLoader {
    /// Whether a path prefix is already in the form requests are matched in.
    static func isRoutingPath(_ path: String) -> Bool {
        guard !path.contains(where: { "%;?#\\".contains($0) }) else { return false }
        return !path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().dropLast().contains {
            $0.isEmpty || $0 == "." || $0 == ".."
        } && !path.hasSuffix("/.") && !path.hasSuffix("/..")
    }
}
