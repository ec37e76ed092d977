// jwt-bench: nanoseconds per JWTVerifier.verify for HS256, RS256, ES256 and EdDSA tokens.
//
// Usage: jwt-bench [--iterations N] [--repeat R] [--only ALG]
// Each algorithm gets a fresh key (OpenSSL) and one token of typical claims (sub, iss, aud,
// iat, nbf, exp, a scope; about 250 bytes for HS256), verified N times per run on one thread;
// the figure is the median of R runs. Every verification must succeed, or the bench exits 1.
// Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), as issue 14 budgets CPU per
// request, so other processes on a busy machine do not inflate the figure.

import ClientAuth

#if canImport(Glibc)
    import Glibc
#endif

var iterations = 0
var repeats = 5
var only: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--iterations": iterations = Int(arguments.next() ?? "") ?? iterations
    case "--repeat": repeats = Int(arguments.next() ?? "") ?? repeats
    case "--only": only = arguments.next()
    default:
        print("usage: jwt-bench [--iterations N] [--repeat R] [--only HS256|RS256|ES256|EdDSA]")
        exit(2)
    }
}

func cpuNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

let now: Int64 = 1_767_225_600
let claims =
    "{\"sub\":\"user-8f3a2c\",\"iss\":\"https://id.example.com\",\"aud\":\"uploads\",\"iat\":\(now - 60),"
    + "\"nbf\":\(now - 60),\"exp\":\(now + 3600),\"scope\":\"upload\"}"
var secret = [UInt8](repeating: 0, count: 32)
for index in secret.indices { secret[index] = UInt8(truncatingIfNeeded: index &* 37 &+ 11) }
let signers = [
    TokenSigner(hmacSecret: secret), TokenSigner(algorithm: "RS256"), TokenSigner(algorithm: "ES256"),
    TokenSigner(algorithm: "EdDSA"),
]
let settings = JWTVerifier.Settings(issuer: "https://id.example.com", audiences: ["uploads"], leeway: 30)
print("| algorithm | token bytes | iterations | CPU ns per verify (median of \(repeats)) |")
print("|---|---:|---:|---:|")
for signer in signers where only == nil || only == signer.algorithm {
    let keys = try JWKSet(json: Array("{\"keys\":[\(signer.publicJWK)]}".utf8))
    let verifier = JWTVerifier(keys: keys, settings: settings)
    let token = signer.sign(claims: claims)
    let count = iterations > 0 ? iterations : (signer.algorithm == "HS256" ? 1_000_000 : 10_000)
    var samples: [Double] = []
    for _ in 0..<repeats {
        let start = cpuNanoseconds()
        for _ in 0..<count {
            guard case .success = token.withUnsafeBytes({ verifier.verify($0, now: now) }) else {
                print("\(signer.algorithm): verification failed")
                exit(1)
            }
        }
        samples.append(Double(cpuNanoseconds() - start) / Double(count))
    }
    samples.sort()
    let median = samples[samples.count / 2]
    print("| \(signer.algorithm) | \(token.count) | \(count) | \(Int(median.rounded())) |")
}
