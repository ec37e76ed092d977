import ClientAuth
import Testing

@Suite struct JWTClaimsTests {
    let secret = [UInt8](repeating: 0x5A, count: 32)
    let now: Int64 = 1_767_225_600
    let settings = JWTVerifier.Settings(
        issuer: "https://id.example.com", audiences: ["uploads", "photos"], leeway: 30,
        requiredClaims: ["tenant"])

    func result(_ claims: String, settings: JWTVerifier.Settings? = nil) throws -> Result<
        VerifiedToken, JWTRejection
    > {
        let token = HMACTokenMaker(secret: secret).token(
            header: #"{"alg":"HS256","typ":"JWT"}"#, claims: claims)
        return try secretVerifier(secret, settings: settings ?? self.settings).verify(
            Array(token.utf8), now: now)
    }

    /// A claims set that passes `settings`, with members replaced or added (`nil` removes).
    func claims(_ changes: [String: String?] = [:]) -> String {
        var members: [(String, String)] = [
            ("sub", #""alice""#), ("iss", #""https://id.example.com""#), ("aud", #""uploads""#),
            ("exp", "\(now + 300)"), ("nbf", "\(now - 5)"), ("iat", "\(now - 5)"), ("tenant", #""acme""#),
        ]
        for (name, value) in changes.sorted(by: { $0.key < $1.key }) {
            members.removeAll { $0.0 == name }
            if let value { members.append((name, value)) }
        }
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    @Test func acceptsAValidClaimsSet() throws {
        let token = try result(claims(["admin": "false", "level": "3", "ratio": "0.5", "roles": #"["a"]"#]))
            .get()
        #expect(token.subject == "alice")
        #expect(token.claim(named: "sub") == "alice")
        #expect(token.claim(named: "tenant") == "acme")
        #expect(token.claim(named: "admin") == "false")
        #expect(token.claim(named: "level") == "3")
        #expect(token.claim(named: "ratio") == "0.5")
        #expect(token.claim(named: "roles") == nil)
        #expect(token.claim(named: "missing") == nil)
        #expect(token.claims.members.count == 11)
    }

    @Test func expiryHonoursTheLeeway() throws {
        #expect(try result(claims(["exp": "\(now - 29)"])).get().subject == "alice")
        #expect(rejection(try result(claims(["exp": "\(now - 30)"]))) == .expired)
        #expect(rejection(try result(claims(["exp": "\(now - 30)"]), settings: .init(leeway: 31))) == nil)
        #expect(rejection(try result(claims(["exp": "\(now)"]), settings: .init())) == .expired)
        #expect(try result(claims(["exp": "\(now + 1)"]), settings: .init()).get().subject == "alice")
        // Fractions are floored (NumericDate); a date past Int64 is malformed (it would never
        // expire), the largest Int64 does not overflow with the leeway.
        #expect(rejection(try result(claims(["exp": "\(now).9"]), settings: .init())) == .expired)
        #expect(rejection(try result(claims(["exp": "1e300"]))) == .malformed)
        #expect(
            try result(claims(["exp": "9223372036854775807"]), settings: .init(leeway: 60)).get().subject
                == "alice")
    }

    @Test func aNegativeLeewayCountsAsNone() throws {
        let settings = JWTVerifier.Settings(leeway: -100)
        #expect(settings.leeway == 0)
        #expect(try result(claims(["exp": "\(now + 1)"]), settings: settings).get().subject == "alice")
    }

    @Test func notBeforeAndIssuedAtMayNotBeInTheFuture() throws {
        #expect(try result(claims(["nbf": "\(now + 30)"])).get().subject == "alice")
        #expect(rejection(try result(claims(["nbf": "\(now + 31)"]))) == .notYetValid)
        #expect(try result(claims(["iat": "\(now + 30)"])).get().subject == "alice")
        #expect(rejection(try result(claims(["iat": "\(now + 31)"]))) == .notYetValid)
    }

    @Test func expIsRequiredUnlessConfiguredOtherwise() throws {
        #expect(rejection(try result(claims(["exp": nil]))) == .missingClaim)
        var lenient = settings
        lenient.requiresExpiration = false
        #expect(try result(claims(["exp": nil]), settings: lenient).get().subject == "alice")
    }

    @Test func checksTheIssuerExactly() throws {
        #expect(rejection(try result(claims(["iss": #""https://id.example.com/""#]))) == .wrongIssuer)
        #expect(rejection(try result(claims(["iss": #""HTTPS://id.example.com""#]))) == .wrongIssuer)
        #expect(rejection(try result(claims(["iss": nil]))) == .missingClaim)
        #expect(try result(claims(["iss": #""anyone""#]), settings: .init()).get().subject == "alice")
    }

    @Test func checksTheAudienceAsAStringOrAList() throws {
        #expect(try result(claims(["aud": #""photos""#])).get().subject == "alice")
        #expect(try result(claims(["aud": #"["billing","photos"]"#])).get().subject == "alice")
        #expect(rejection(try result(claims(["aud": #""billing""#]))) == .wrongAudience)
        #expect(rejection(try result(claims(["aud": #"["billing"]"#]))) == .wrongAudience)
        #expect(rejection(try result(claims(["aud": "[]"]))) == .wrongAudience)
        #expect(rejection(try result(claims(["aud": #""Uploads""#]))) == .wrongAudience)
        #expect(rejection(try result(claims(["aud": nil]))) == .missingClaim)
        #expect(try result(claims(["aud": nil]), settings: .init()).get().subject == "alice")
    }

    @Test func requiredClaimsMustBePresentAndNotNull() throws {
        #expect(rejection(try result(claims(["tenant": nil]))) == .missingClaim)
        #expect(rejection(try result(claims(["tenant": "null"]))) == .missingClaim)
        #expect(try result(claims(["tenant": "0"])).get().claim(named: "tenant") == "0")
    }

    @Test(arguments: [
        ["exp": #""tomorrow""#], ["nbf": "true"], ["iat": "null"], ["iss": "1"], ["sub": "[]"], ["aud": "7"],
        ["aud": #"["uploads",1]"#], ["sub": #""a","sub":"b""#],
    ])
    func refusesRegisteredClaimsOfTheWrongType(_ change: [String: String?]) throws {
        #expect(rejection(try result(claims(change))) == .malformed)
    }

    @Test func theRejectionReasonsAreAFixedSetOfStableLabels() throws {
        #expect(
            JWTRejection.allCases.map(\.rawValue) == [
                "malformed", "too_large", "unsupported_algorithm", "unknown_key", "bad_signature", "expired",
                "not_yet_valid", "wrong_issuer", "wrong_audience", "missing_claim",
            ])
        // Each reason is reachable.
        let maker = HMACTokenMaker(secret: secret)
        var seen: Set<JWTRejection> = []
        func note(_ outcome: Result<VerifiedToken, JWTRejection>) {
            if let reason = rejection(outcome) { seen.insert(reason) }
        }
        let verifier = try secretVerifier(secret, settings: settings)
        note(verifier.verify(Array("a.b".utf8), now: now))
        note(verifier.verify([UInt8](repeating: 0x41, count: 9000), now: now))
        note(verifier.verify(Array(maker.token(header: #"{"alg":"none"}"#, claims: claims()).utf8), now: now))
        let keyed = JWTVerifier(
            keys: JWKSet(keys: [try JWK.sharedSecret(secret, keyID: "k")]), settings: settings)
        note(
            keyed.verify(
                Array(maker.token(header: #"{"alg":"HS256","kid":"x"}"#, claims: claims()).utf8), now: now))
        note(
            verifier.verify(
                Array(
                    HMACTokenMaker(secret: [UInt8](repeating: 1, count: 32))
                        .token(header: #"{"alg":"HS256"}"#, claims: claims()).utf8), now: now))
        for change in [
            ["exp": "\(now - 100)"], ["nbf": "\(now + 100)"], ["iss": #""x""#], ["aud": #""x""#],
            ["tenant": nil],
        ] {
            note(try result(claims(change)))
        }
        #expect(seen == Set(JWTRejection.allCases))
    }
}
