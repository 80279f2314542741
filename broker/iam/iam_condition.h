/*
 * iam_condition: the Condition element of IAM policy statements, parsed once when a policy
 * loads and evaluated against a request's context, as IAM does it
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition.html,
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html,
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html).
 * Pure: no I/O, no globals; the caller (aws/) builds the context from the request.
 *
 * Operators: String{Equals,NotEquals,EqualsIgnoreCase,NotEqualsIgnoreCase,Like,NotLike},
 * Arn{Equals,Like,NotEquals,NotLike}, Numeric{Equals,NotEquals,LessThan,LessThanEquals,
 * GreaterThan,GreaterThanEquals}, Date{the same six}, Bool, IpAddress, NotIpAddress, Null; each
 * but Null with the IfExists suffix, and the ForAnyValue: / ForAllValues: prefixes.
 * Keys: aws:SourceIp, aws:PrincipalArn, aws:PrincipalAccount, aws:PrincipalType,
 * aws:RequestedRegion, aws:SecureTransport, aws:CurrentTime, aws:EpochTime,
 * aws:ResourceTag/<key>, aws:RequestTag/<key>, aws:TagKeys (key names ignore case, as IAM's do).
 *
 * Refused when the policy loads, with the operator or key named: an operator mskmock does not
 * evaluate (BinaryEquals, a typo), a key it does not know (aws:PrincipalOrgID, s3:prefix, ...),
 * a value the operator cannot read (a CIDR, a number, a date, true/false), a policy variable.
 * Never a condition quietly taken as true or false.
 *
 * Semantics: the operators of a block, and the keys of an operator, must all hold (AND); the
 * values of one key are alternatives (OR; for a negated operator, none may match). A key absent
 * from the context fails a positive operator and satisfies a negated one; IfExists makes it
 * satisfy either; Null "true" holds when it is absent. ForAnyValue: some value of the context
 * key satisfies the operator (false when absent); ForAllValues: every one does (true when absent).
 */
#ifndef IAM_CONDITION_H
#define IAM_CONDITION_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct iam_cond iam_cond;

/*
 * Parse a statement's Condition object. Returns 0 and *out, or -1 with the reason in err (it
 * names the operator, the key or the value). *out is shared by reference (iam_cond_ref).
 */
int iam_cond_parse(const json_t *cond, iam_cond **out, char *err, size_t n);
iam_cond *iam_cond_ref(iam_cond *c);
void iam_cond_free(iam_cond *c); /* drops one reference */

/* Whether key (with any /<tag key> tail) is one mskmock can give a value. */
bool iam_cond_key_known(const char *key);

/* A request's context: keys with one or several values (aws:TagKeys), built by the caller. */
typedef struct iam_ctx iam_ctx;
iam_ctx *iam_ctx_new(void);
void iam_ctx_free(iam_ctx *x);
/* Add a value to key (a second call for the same key makes it multi-valued). Both are copied. */
void iam_ctx_add(iam_ctx *x, const char *key, const char *value);
/* The key's values (NULL and *n = 0 when absent), key names compared without case. */
const char *const *iam_ctx_get(const iam_ctx *x, const char *key, size_t *n);

/* Whether every condition of c holds in ctx (NULL c: no condition; NULL ctx: an empty context). */
bool iam_cond_eval(const iam_cond *c, const iam_ctx *ctx);

#endif
