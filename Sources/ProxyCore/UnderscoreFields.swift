public import HTTP1

extension RequestHead {
    /// Removes the fields whose name contains `_`, as nginx does unless
    /// `underscores_in_headers` allows them: CGI-style servers (PHP, Python WSGI) turn `-`
    /// and `_` alike into `_`, so `Content_Length` or `X_Forwarded_For` would stand in for the
    /// field FormGate checked or set. Returns how many were removed (the rule action
    /// `drop_underscore_header` counts them).
    public mutating func removeUnderscoreFields() -> Int {
        var dropped = 0
        headers.forEachField { name, _ in
            if name.contains(UInt8(ascii: "_")) { dropped += 1 }
        }
        guard dropped > 0 else { return 0 }
        headers.removeFields(whereName: { $0.contains(UInt8(ascii: "_")) })
        return dropped
    }
}

extension RequestHead {
    /// Removes the fields whose name contains `_` unless `allowed` (`underscores_in_headers`),
    /// and counts the drop as a rule action: the one place both transports drop them.
    mutating func dropUnderscoreFields(unless allowed: Bool, _ actions: inout ActionBuffer) {
        guard !allowed else { return }
        let dropped = removeUnderscoreFields()
        if dropped > 0 { actions.append(.droppedUnderscoreFields(dropped)) }
    }
}
