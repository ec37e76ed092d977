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
