import CCrypto
import ClientAuth
import HTTP1
import HTTPCore
import ProxyCore
import Synchronization
import Testing
import UploadRules

/// `auth: { jwt }` as a request check: the token from its place, 401s with the RFC 6750
/// challenge and a reason label, the identity with the claims the route's templates read, and
/// the cache of verified tokens, which never outlives a token's expiry.
@Suite struct JWTCheckTests {
    static let secret = Array("jwt-check-secret-0123456789abcdef!".utf8)
    static let t0: Int64 = 1_800_000_000

    /// An HS256 token over `claims` (JSON text), signed with OpenSSL's HMAC directly.
    static func token(_ claims: String, secret: [UInt8] = secret) -> String {
        func encode(_ bytes: [UInt8]) -> String {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            var out = ""
            var index = 0
            while index < bytes.count {
                let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
                let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
                for position in 0..<(chunk.count + 1) {
                    out.append(alphabet[(value >> (18 - 6 * position)) & 63])
                }
                index += 3
            }
            return out
        }
        let signing = encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + encode(Array(claims.utf8))
        var mac = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let input = Array(signing.utf8)
        _ = HMAC(EVP_sha256(), secret, Int32(secret.count), input, input.count, &mac, &length)
        return signing + "." + encode(mac)
    }

    /// A clock the test moves.
    final class Clock: Sendable {
        let seconds = Mutex(JWTCheckTests.t0)
        func read() -> Int64 { seconds.withLock { $0 } }
        func set(_ value: Int64) { seconds.withLock { $0 = value } }
    }

    static func check(_ clock: Clock, source: TokenSource = .bearer, claims: [String] = []) throws -> JWTCheck
    {
        let key = try JWK.sharedSecret(secret)
        return JWTCheck(
            verifier: JWTVerifier(keys: JWKSet(keys: [key]), settings: .init(issuer: "fg", leeway: 0)),
            source: source, claimNames: claims, clock: { clock.read() })
    }

    static func request(_ fields: [(String, String)]) -> CheckRequest {
        CheckRequest(
            head: RequestHead(
                method: "POST", target: "/upload", headers: HeaderFields([("Host", "t")] + fields)),
            route: "r", client: Array("192.0.2.1".utf8), now: 0)
    }

    @Test func aValidTokenIdentifiesItsSubjectWithTheClaimsTheRouteReads() throws {
        let check = try Self.check(Clock(), claims: ["tenant"])
        let token = Self.token(#"{"sub":"alice","iss":"fg","exp":1800000600,"tenant":"t1","role":"x"}"#)
        let answer = check.check(Self.request([("Authorization", "Bearer \(token)")]))
        #expect(answer == .identified(Identity(subject: "alice", method: .jwt, claims: ["tenant": "t1"])))
    }

    @Test(arguments: [
        ([], "Bearer", "missing"),
        ([("Authorization", "Basic YWxpY2U=")], "Bearer error=\"invalid_request\"", "malformed"),
        (
            [("Authorization", "Bearer a.b.c"), ("Authorization", "Bearer a.b.c")],
            "Bearer error=\"invalid_request\"", "ambiguous"
        ),
        ([("Authorization", "Bearer a.b.c")], "Bearer error=\"invalid_token\"", "malformed"),
    ])
    func refusalsCarryTheChallengeAndAReasonLabel(
        fields: [(String, String)], challenge: String, reason: String
    )
        throws
    {
        let answer = try Self.check(Clock()).check(Self.request(fields))
        guard case .refuse(let refusal) = answer else {
            Issue.record("expected a refusal, got \(answer)")
            return
        }
        #expect(refusal.status == 401)
        #expect(refusal.fields == [.init("WWW-Authenticate", challenge)])
        #expect(refusal.tally == .auth(.denied, reason: reason))
        #expect(refusal.reason.hasPrefix("auth: jwt: "))
    }

    @Test func aTokenWithoutSubjectIsRefused() throws {
        let token = Self.token(#"{"iss":"fg","exp":1800000600}"#)
        let answer = try Self.check(Clock()).check(Self.request([("Authorization", "Bearer \(token)")]))
        guard case .refuse(let refusal) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(refusal.tally == .auth(.denied, reason: "missing_claim"))
    }

    @Test func theCacheServesATokenOnlyUntilItExpires() throws {
        let clock = Clock()
        let check = try Self.check(clock)
        let token = Self.token(#"{"sub":"alice","iss":"fg","exp":1800000060}"#)
        let request = Self.request([("Authorization", "Bearer \(token)")])
        #expect(check.check(request) == .identified(Identity(subject: "alice", method: .jwt)))
        clock.set(Self.t0 + 59)
        #expect(check.check(request) == .identified(Identity(subject: "alice", method: .jwt)), "a hit")
        clock.set(Self.t0 + 60)
        guard case .refuse(let refusal) = check.check(request) else {
            Issue.record("an expired token must not be served from the cache")
            return
        }
        #expect(refusal.tally == .auth(.denied, reason: "expired"))
        // One byte off (the last signature character) is another token: verified, and refused.
        clock.set(Self.t0)
        var forged = token
        let last = forged.removeLast()
        forged.append(last == "A" ? "B" : "A")
        guard case .refuse = check.check(Self.request([("Authorization", "Bearer \(forged)")])) else {
            Issue.record("a token one byte off must not hit the cache")
            return
        }
        let other = Self.token(
            #"{"sub":"alice","iss":"fg","exp":1800000060}"#,
            secret: Array("another-secret-0123456789abcdef-0123".utf8))
        guard case .refuse = check.check(Self.request([("Authorization", "Bearer \(other)")])) else {
            Issue.record("a token signed with another key must be refused")
            return
        }
    }
}
