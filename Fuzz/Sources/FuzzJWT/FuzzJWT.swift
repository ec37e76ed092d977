import ClientAuth

/// A JWT verifier over hostile tokens, and the JWKS loader and JSON parser over hostile
/// documents: no crash, no trap, the same verdict twice, and nothing accepted that was not
/// signed with the fixed secret (the fuzzer cannot forge an HMAC: an acceptance is a bug).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // Made per input (a global one reads as a leak at exit to LeakSanitizer): its keys and
    // pooled HMAC contexts are freed each time, so a leak there is found too.
    let verifier = makeVerifier()
    let first = verifier.verify(bytes, now: 1_800_000_000)
    let second = verifier.verify(bytes, now: 1_800_000_000)
    precondition(first == second, "the verdict changed between two calls")
    if case .success = first { preconditionFailure("a token the fuzzer made was accepted") }
    if let set = try? JWKSet(json: bytes) {
        precondition(!set.keys.isEmpty, "a key set loaded with no usable key")
    }
    _ = try? JSONParser().parse(bytes)
    return 0
}

/// HS256 with a secret the fuzzer never sees.
func makeVerifier() -> JWTVerifier {
    let secret = Array("fuzz-secret-that-no-input-knows-0123456789".utf8)
    // swift-format-ignore: NeverUseForceTry
    let key = try! JWK.sharedSecret(secret)
    return JWTVerifier(keys: JWKSet(keys: [key]), settings: .init(leeway: 30))
}
