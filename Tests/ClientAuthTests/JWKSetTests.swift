import ClientAuth
import Foundation
import Testing

@Suite struct JWKSetTests {
    func keySet(_ members: String...) throws(JWKSetError) -> JWKSet {
        try JWKSet(json: Array("{\"keys\":[\(members.joined(separator: ","))]}".utf8))
    }

    func skipReason(_ member: String) -> JWKError? {
        let usable = #"{"kty":"oct","k":"\#(base64url([UInt8](repeating: 7, count: 32)))","kid":"usable"}"#
        guard let set = try? keySet(usable, member) else { return nil }
        return set.skipped.first?.reason
    }

    @Test func loadsTheRFC7517PublicKeySetSkippingTheEncryptionKey() throws {
        let set = try JWKSet(json: Array(RFCExamples.a1PublicKeySet.utf8))
        #expect(set.keys.count == 1)
        let rsa = try #require(set.keys.first)
        #expect(rsa.keyType == "RSA")
        #expect(rsa.keyID == "2011-04-29")
        #expect(rsa.algorithm == .rs256)
        #expect(rsa.bits == 2048)
        #expect(rsa.fits(.rs256))
        #expect(!rsa.fits(.ps256))  // its own alg narrows it
        #expect(set.skipped == [JWKSet.SkippedKey(index: 0, keyID: "1", reason: .notForSignatures)])
        #expect(set.skipped[0].description == #"key 0 (kid "1"): not a signature key (use / key_ops)"#)
    }

    @Test func loadsEveryKeyType() throws {
        let set = try keySet(RFCExamples.a1Key, RFCExamples.a2Key, RFCExamples.a3Key, RFCExamples.ed25519Key)
        #expect(set.skipped.isEmpty)
        #expect(set.keys.map(\.keyType) == ["oct", "RSA", "EC", "OKP"])
        #expect(set.keys.map(\.bits) == [512, 2048, 256, 256])
        let (oct, rsa, ec, okp) = (set.keys[0], set.keys[1], set.keys[2], set.keys[3])
        #expect([JWSAlgorithm.hs256, .hs384, .hs512].allSatisfy(oct.fits))
        #expect([JWSAlgorithm.rs256, .rs384, .rs512, .ps256, .ps384, .ps512].allSatisfy(rsa.fits))
        #expect(ec.fits(.es256) && !ec.fits(.es384))
        #expect(okp.fits(.edDSA))
        // The key type decides: no key verifies another family's algorithm (and no key here
        // is on P-384).
        for algorithm in JWSAlgorithm.allCases {
            let fitting = set.keys.filter { $0.fits(algorithm) }.map(\.keyType)
            #expect(fitting.count == (algorithm == .es384 ? 0 : 1), "\(algorithm): \(fitting)")
        }
    }

    @Test func refusesRSAKeysUnder2048Bits() throws {
        // A 1024-bit modulus (the top bit set, odd): skipped as too short, before OpenSSL.
        let modulus = [UInt8](repeating: 0xC3, count: 128)
        #expect(
            skipReason(#"{"kty":"RSA","n":"\#(base64url(modulus))","e":"AQAB"}"#) == .keyTooShort(bits: 1024))
    }

    @Test func refusesECPointsNotOnTheCurve() throws {
        // The RFC 7515 A.3 point with one bit of y changed.
        let point =
            #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","#
            + #""y":"x_FEzRu9m36ILN_tue659LNpXW6pCyStikYjKIWI5a0"}"#
        #expect(skipReason(point) == .rejectedByOpenSSL)
    }

    @Test(arguments: [
        (#"{"kty":"EC","crv":"P-521","x":"AA","y":"AA"}"#, JWKError.unsupportedCurve("P-521")),
        (#"{"kty":"OKP","crv":"X25519","x":"AA"}"#, .unsupportedCurve("X25519")),
        (#"{"kty":"OKP","crv":"Ed25519","x":"AAAA"}"#, .invalidMember("x")),
        (
            #"{"kty":"EC","crv":"P-256","x":"\#(base64url([UInt8](repeating: 1, count: 33)))","y":"AAAA"}"#,
            .invalidMember("x")
        ),
        (#"{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}"#, .rejectedByOpenSSL),
        (
            #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"}"#,
            .missingMember("y")
        ),
        (#"{"kty":"RSA","e":"AQAB"}"#, .missingMember("n")),
        (#"{"kty":"RSA","n":"AQAB","e":"AQAB","d":"AQAB"}"#, .privateKeyMaterial("d")),
        (RFCExamples.a2PrivateECKey, .privateKeyMaterial("d")),
        (#"{"kty":"oct","k":"c2hvcnQ"}"#, .keyTooShort(bits: 40)),
        (#"{"kty":"DSA","y":"AA"}"#, .unsupportedKeyType("DSA")),
        (#"{"crv":"P-256"}"#, .missingMember("kty")),
        (#"{"kty":"oct","k":"c2hvcnQ","use":"enc"}"#, .notForSignatures),
        (#"{"kty":"oct","k":"c2hvcnQ","key_ops":["encrypt"]}"#, .notForSignatures),
        (#"{"kty":"oct","k":"c2hvcnQ","kid":7}"#, .invalidMember("kid")),
        (#"{"kty":"oct","k":"c2hvcnQ","alg":"none"}"#, .unsupportedAlgorithm("none")),
        (
            #"{"kty":"oct","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","alg":"RS256"}"#,
            .unsupportedAlgorithm("RS256")
        ),
        (
            #"{"kty":"oct","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","alg":"HS512"}"#,
            .unsupportedAlgorithm("HS512")
        ),
        (#"{"kty":"oct","k":"AAAA=="}"#, .invalidMember("k")),
        (#"{"kty":"RSA","n":"AQAB","e":"AQAB","oth":[]}"#, .privateKeyMaterial("oth")),
        ("[1]", .notAnObject),
    ])
    func skipsOddKeysWithTheReason(_ member: String, _ reason: JWKError) {
        #expect(skipReason(member) == reason, "\(member)")
    }

    @Test func refusesEvenExponentsAndDuplicateKeyIDs() throws {
        let n =
            "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-"
            + "pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2Ca"
            + "pHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb5"
            + "4h4FRWyuXpoQ"
        #expect(skipReason(#"{"kty":"RSA","n":"\#(n)","e":"AQAA"}"#) == .invalidMember("e"))
        #expect(skipReason(#"{"kty":"RSA","n":"\#(n)","e":"AQ"}"#) == .invalidMember("e"))
        let set = try keySet(
            #"{"kty":"RSA","n":"\#(n)","e":"AQAB","kid":"a"}"#,
            #"{"kty":"RSA","n":"\#(n)","e":"AQAB","kid":"a"}"#)
        #expect(set.keys.count == 1)
        #expect(set.skipped.map(\.reason) == [.duplicateKeyID("a")])
    }

    @Test func aSetWithoutUsableKeysIsAnError() {
        #expect(
            throws: JWKSetError.noUsableKey([
                JWKSet.SkippedKey(index: 0, keyID: nil, reason: .notForSignatures)
            ])
        ) {
            try keySet(#"{"kty":"oct","k":"AA","use":"enc"}"#)
        }
        #expect(throws: JWKSetError.noUsableKey([])) { try keySet() }
        #expect(throws: JWKSetError.noKeysArray) { try JWKSet(json: Array(#"{"keys":{}}"#.utf8)) }
        #expect(throws: JWKSetError.noKeysArray) { try JWKSet(json: Array("[]".utf8)) }
        #expect(throws: JWKSetError.invalidJSON(JSONError(.unexpectedEnd, at: 9))) {
            try JWKSet(json: Array(#"{"keys":["#.utf8))
        }
        #expect(throws: JWKSetError.unreadable("/nonexistent/jwks.json")) {
            try JWKSet(contentsOfFile: "/nonexistent/jwks.json")
        }
    }

    @Test func loadsAFileWithinTheSizeLimit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(RFCExamples.a1PublicKeySet.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try JWKSet(contentsOfFile: path).keys.map(\.keyID) == ["2011-04-29"])
        #expect(throws: JWKSetError.unreadable(path)) { try JWKSet(contentsOfFile: path, maximumBytes: 100) }
    }

    @Test func sharedSecretsNeedTheHashLength() throws {
        #expect(throws: JWKError.keyTooShort(bits: 248)) {
            try JWK.sharedSecret([UInt8](repeating: 1, count: 31))
        }
        let short = try JWK.sharedSecret([UInt8](repeating: 1, count: 32))
        #expect(short.fits(.hs256) && !short.fits(.hs384) && !short.fits(.hs512))
        let long = try JWK.sharedSecret([UInt8](repeating: 1, count: 64))
        #expect(long.fits(.hs256) && long.fits(.hs384) && long.fits(.hs512))
        #expect(!long.fits(.rs256) && !long.fits(.edDSA))
    }
}
