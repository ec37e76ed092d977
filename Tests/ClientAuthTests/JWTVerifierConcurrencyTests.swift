import ClientAuth
import Testing

/// One verifier is shared by every worker thread: HMAC contexts are pooled and re-armed
/// between tokens, so interleaved good and bad tokens on many threads must each get their
/// own verdict.
@Suite struct JWTVerifierConcurrencyTests {
    @Test func interleavedTokensOnManyThreadsKeepTheirVerdicts() async throws {
        let secret = [UInt8](repeating: 0x42, count: 64)
        let now: Int64 = 1_767_225_600
        let maker = HMACTokenMaker(secret: secret)
        let claims = #"{"sub":"worker","exp":\#(now + 60)}"#
        let good = ["HS256", "HS384", "HS512"].map {
            Array(maker.token(header: #"{"alg":"\#($0)"}"#, claims: claims).utf8)
        }
        let bad = good.map { token -> [UInt8] in
            var changed = token
            let index = changed.count - 12
            changed[index] = changed[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            return changed
        }
        let verifier = try secretVerifier(secret)
        let tasks = 8
        let rounds = 500
        let verdicts = await withTaskGroup(of: (accepted: Int, refused: Int).self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var accepted = 0
                    var refused = 0
                    for round in 0..<rounds {
                        let pick = (task + round) % 3
                        if case .success = verifier.verify(good[pick], now: now) { accepted += 1 }
                        if rejection(verifier.verify(bad[pick], now: now)) == .badSignature { refused += 1 }
                    }
                    return (accepted, refused)
                }
            }
            var total = (accepted: 0, refused: 0)
            for await verdict in group {
                total.accepted += verdict.accepted
                total.refused += verdict.refused
            }
            return total
        }
        #expect(verdicts.accepted == tasks * rounds)
        #expect(verdicts.refused == tasks * rounds)
    }
}
