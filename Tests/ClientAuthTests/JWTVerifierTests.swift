import ClientAuth
import Testing

@Suite struct JWTVerifierTests {
    let secret = [UInt8]((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) })
    var maker: HMACTokenMaker { HMACTokenMaker(secret: secret) }
    let now: Int64 = 1_767_225_600

    func verify(_ token: String, settings: JWTVerifier.Settings = .init(), at time: Int64? = nil) throws
        -> Result<
            VerifiedToken, JWTRejection
        >
    {
        try secretVerifier(secret, settings: settings).verify(Array(token.utf8), now: time ?? now)
    }

    func claims(_ extra: String = "") -> String {
        #"{"sub":"user-1","exp":\#(now + 60)\#(extra)}"#
    }

    // MARK: RFC vectors

    @Test func verifiesRFC7515AppendixA1HS256() throws {
        let keys = try JWKSet(json: Array(#"{"keys":[\#(RFCExamples.a1Key)]}"#.utf8))
        let verifier = JWTVerifier(keys: keys)
        let token = try verifier.verify(Array(RFCExamples.a1Token.utf8), now: RFCExamples.a1Expiry - 1).get()
        #expect(token.algorithm == .hs256)
        #expect(token.subject == nil)
        #expect(token.claim(named: "iss") == "joe")
        #expect(token.claim(named: "exp") == "1300819380")
        #expect(token.claim(named: "http://example.com/is_root") == "true")
        #expect(
            rejection(verifier.verify(Array(RFCExamples.a1Token.utf8), now: RFCExamples.a1Expiry)) == .expired
        )
    }

    @Test(arguments: [
        (RFCExamples.a2Key, RFCExamples.a2Token, JWSAlgorithm.rs256),
        (RFCExamples.a3Key, RFCExamples.a3Token, .es256),
    ])
    func verifiesRFC7515AppendixA2AndA3(_ key: String, _ token: String, _ algorithm: JWSAlgorithm) throws {
        let verifier = JWTVerifier(keys: try JWKSet(json: Array(#"{"keys":[\#(key)]}"#.utf8)))
        let verified = try verifier.verify(Array(token.utf8), now: RFCExamples.a1Expiry - 1).get()
        #expect(verified.algorithm == algorithm)
        #expect(verified.claim(named: "iss") == "joe")
        // One bit of the signature changed.
        var bytes = Array(token.utf8)
        let index = bytes.count - 20
        bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(rejection(verifier.verify(bytes, now: RFCExamples.a1Expiry - 1)) == .badSignature)
    }

    @Test func verifiesRFC8037AppendixA4EdDSASignature() throws {
        let verifier = JWTVerifier(
            keys: try JWKSet(json: Array(#"{"keys":[\#(RFCExamples.ed25519Key)]}"#.utf8)))
        // The signature verifies; the payload is not a claims set, so the token is malformed.
        #expect(rejection(verifier.verify(Array(RFCExamples.ed25519Token.utf8), now: now)) == .malformed)
        var bytes = Array(RFCExamples.ed25519Token.utf8)
        bytes[bytes.count - 30] ^= 0x01
        #expect(rejection(verifier.verify(bytes, now: now)) == .badSignature)
    }

    // MARK: Algorithms and keys

    @Test func acceptsHS256HS384AndHS512WithOneSecret() throws {
        for algorithm in ["HS256", "HS384", "HS512"] {
            let token = maker.token(header: #"{"alg":"\#(algorithm)","typ":"JWT"}"#, claims: claims())
            let verified = try verify(token).get()
            #expect(verified.algorithm.rawValue == algorithm)
            #expect(verified.subject == "user-1")
        }
    }

    @Test(arguments: [
        #"{"alg":"none"}"#, #"{"alg":"None"}"#, #"{"alg":"hs256"}"#, #"{"alg":"ES512"}"#, #"{"alg":"RS256"}"#,
    ])
    func refusesAlgorithmsNoKeyIsFor(_ header: String) throws {
        #expect(rejection(try verify(maker.token(header: header, claims: claims()))) == .unsupportedAlgorithm)
        // `none` with an empty signature, as an attacker would send it.
        let unsigned = base64url(header) + "." + base64url(claims()) + "."
        #expect(rejection(try verify(unsigned)) == .unsupportedAlgorithm)
    }

    @Test func anRSAPublicKeyIsNeverAnHMACSecret() throws {
        let keys = try JWKSet(json: Array(#"{"keys":[\#(RFCExamples.a2Key)]}"#.utf8))
        let verifier = JWTVerifier(keys: keys)
        // The classic confusion: HMAC keyed with the public key's own bytes (JWK text and n).
        for keyBytes in [Array(RFCExamples.a2Key.utf8), Base64URL.decode(Array("AQAB".utf8))!] {
            let token = HMACTokenMaker(secret: keyBytes).token(header: #"{"alg":"HS256"}"#, claims: claims())
            #expect(rejection(verifier.verify(Array(token.utf8), now: now)) == .unsupportedAlgorithm)
        }
    }

    @Test func theKeyIDSelectsTheKey() throws {
        let other = [UInt8](repeating: 9, count: 32)
        let keys = JWKSet(keys: [
            try JWK.sharedSecret(secret, keyID: "a"), try JWK.sharedSecret(other, keyID: "b"),
        ])
        let verifier = JWTVerifier(keys: keys)
        let withA = maker.token(header: #"{"alg":"HS256","kid":"a"}"#, claims: claims())
        let withB = HMACTokenMaker(secret: other).token(
            header: #"{"alg":"HS256","kid":"b"}"#, claims: claims())
        #expect(try verifier.verify(Array(withA.utf8), now: now).get().keyID == "a")
        #expect(try verifier.verify(Array(withB.utf8), now: now).get().keyID == "b")
        let unknown = maker.token(header: #"{"alg":"HS256","kid":"c"}"#, claims: claims())
        #expect(rejection(verifier.verify(Array(unknown.utf8), now: now)) == .unknownKey)
        // No kid and two keys fit HS256: ambiguous, refused.
        let bare = maker.token(header: #"{"alg":"HS256"}"#, claims: claims())
        #expect(rejection(verifier.verify(Array(bare.utf8), now: now)) == .unknownKey)
        // A kid naming the other key: that key is used, and the signature fails.
        let crossed = maker.token(header: #"{"alg":"HS256","kid":"b"}"#, claims: claims())
        #expect(rejection(verifier.verify(Array(crossed.utf8), now: now)) == .badSignature)
        // A kid is ignored when no configured key has one (a shared secret).
        #expect(try verify(unknown).get().subject == "user-1")
    }

    // MARK: Header

    @Test(arguments: [
        #"{"alg":"HS256","typ":"jwt"}"#, #"{"alg":"HS256","typ":"application/JWT"}"#,
        #"{"typ":"JWT","alg":"HS256"}"#,
        #"{"alg":"HS256","jku":"https://evil.example/keys","x5u":"https://evil.example/cert"}"#,
    ])
    func acceptsHeaders(_ header: String) throws {
        #expect(try verify(maker.token(header: header, claims: claims())).get().subject == "user-1")
    }

    @Test(arguments: [
        #"{"alg":"HS256","typ":"at+jwt"}"#, #"{"alg":"HS256","typ":1}"#, #"{"alg":"HS256","crit":["exp"]}"#,
        #"{"alg":"HS256","crit":[]}"#, #"{"alg":["HS256"]}"#, #"{"typ":"JWT"}"#, #"{"alg":"HS256","kid":1}"#,
        #"{"alg":"HS256","alg":"HS256"}"#, #"["HS256"]"#, #"{"alg":"HS256""#, "",
    ])
    func refusesMalformedHeaders(_ header: String) throws {
        #expect(rejection(try verify(maker.token(header: header, claims: claims()))) == .malformed)
    }

    // MARK: Shape and size

    @Test func refusesMalformedShapes() throws {
        let token = maker.token(header: #"{"alg":"HS256"}"#, claims: claims())
        let parts = token.split(separator: ".").map(String.init)
        for bad in [
            "", ".", "..", parts[0], parts[0] + "." + parts[1], parts[0] + "." + parts[1] + ".",
            "." + parts[1] + "." + parts[2],
            parts[0] + ".." + parts[2], token + ".", token + "." + parts[2],
            parts[0] + "=." + parts[1] + "." + parts[2],
            token + "=", " " + token, token + " ", parts[0] + "." + parts[1] + "." + parts[2] + "\n",
        ] {
            #expect(rejection(try verify(bad)) == .malformed, "\(bad.debugDescription)")
        }
        let shortSignature = parts[0] + "." + parts[1] + "." + String(parts[2].dropLast(3))
        #expect(rejection(try verify(shortSignature)) == .badSignature)
    }

    @Test func refusesClaimsThatAreNotAnObject() throws {
        for payload in ["[]", "\"sub\"", "1", "{", "{\"exp\":1,}", "{\"a\":\"\\ud800\"}"] {
            #expect(
                rejection(try verify(maker.token(header: #"{"alg":"HS256"}"#, claims: payload))) == .malformed
            )
        }
    }

    @Test func limitsTheTokenSize() throws {
        let padding = String(repeating: "x", count: 7000)
        let token = maker.token(header: #"{"alg":"HS256"}"#, claims: claims(#","pad":"\#(padding)""#))
        #expect(token.utf8.count > 8192)
        #expect(try verify(token, settings: .init(maximumTokenBytes: 16384)).get().subject == "user-1")
        #expect(rejection(try verify(token)) == .tooLarge)
        #expect(rejection(try verify(String(repeating: "A", count: 70000))) == .tooLarge)
    }

    @Test func everySingleByteChangeIsRefused() throws {
        let token = Array(maker.token(header: #"{"alg":"HS256","typ":"JWT"}"#, claims: claims()).utf8)
        let verifier = try secretVerifier(secret)
        #expect(rejection(verifier.verify(token, now: now)) == nil)
        var refused = 0
        for index in token.indices {
            for replacement in [UInt8(ascii: "A"), UInt8(ascii: "_"), UInt8(ascii: "."), 0x00, 0xFF] {
                guard token[index] != replacement else { continue }
                var changed = token
                changed[index] = replacement
                if rejection(verifier.verify(changed, now: now)) != nil { refused += 1 }
            }
            // Cut at every point, and one byte dropped at every point.
            if rejection(verifier.verify(token[..<index], now: now)) != nil { refused += 1 }
            var shorter = token
            shorter.remove(at: index)
            if rejection(verifier.verify(shorter, now: now)) != nil { refused += 1 }
        }
        let attempts = token.indices.reduce(0) { total, index in
            total + 2
                + [UInt8(ascii: "A"), UInt8(ascii: "_"), UInt8(ascii: "."), 0x00, 0xFF].filter {
                    $0 != token[index]
                }.count
        }
        #expect(refused == attempts)
    }

    @Test func acceptsNonContiguousTokens() throws {
        let token = Array(maker.token(header: #"{"alg":"HS256"}"#, claims: claims()).utf8)
        let verifier = try secretVerifier(secret)
        #expect(try verifier.verify(token.lazy.map { $0 }, now: now).get().subject == "user-1")
        let viaRaw = token.withUnsafeBytes { verifier.verify($0, now: now) }
        #expect(try viaRaw.get().subject == "user-1")
    }
}
