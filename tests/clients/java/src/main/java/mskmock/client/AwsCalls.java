package mskmock.client;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sts.StsClient;
import software.amazon.awssdk.services.sts.model.GetCallerIdentityResponse;

/**
 * mskmock's AWS listener (aws.port) through the AWS SDK for Java v2 (software.amazon.awssdk:sts
 * over the url-connection HTTP client); issue 34, docs/control-plane.md.
 * <pre>
 *   aws-calls --endpoint URL --region R [--wrong-secret S]
 *       -> {"caller": {"arn", "account", "user_id"}, "refused": {"code", "message", "status", "exception"}}
 * </pre>
 * Static credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; the
 * client pointed at --endpoint with endpointOverride. refused: GetCallerIdentity signed with
 * --wrong-secret, as the SDK surfaces it (AwsErrorDetails' error code and the HTTP status).
 * The kafka control plane through the same SDK is {@link AwsServerless}.
 */
final class AwsCalls {
    static final String COMMAND = "aws-calls";

    private AwsCalls() {}

    static int run(String[] args) {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        String key = System.getenv("AWS_ACCESS_KEY_ID"), secret = System.getenv("AWS_SECRET_ACCESS_KEY");
        if (!o.containsKey("endpoint") || !o.containsKey("region") || key == null || secret == null) {
            System.err.println("usage: client aws-calls --endpoint URL --region R [--wrong-secret S]"
                    + " (with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set)");
            return 2;
        }
        String token = System.getenv("AWS_SESSION_TOKEN");
        URI endpoint = URI.create(o.get("endpoint"));
        Region region = Region.of(o.get("region"));
        Map<String, Object> res = new LinkedHashMap<>();
        try (SdkHttpClient http = UrlConnectionHttpClient.create();
             StsClient sts = sts(http, endpoint, region, key, secret, token)) {
            GetCallerIdentityResponse who = sts.getCallerIdentity();
            Map<String, Object> caller = new LinkedHashMap<>();
            caller.put("arn", who.arn());
            caller.put("account", who.account());
            caller.put("user_id", who.userId());
            res.put("caller", caller);

            if (o.containsKey("wrong-secret")) {
                try (StsClient bad = sts(http, endpoint, region, key, o.get("wrong-secret"), token)) {
                    bad.getCallerIdentity();
                    throw new IllegalStateException("GetCallerIdentity with a wrong secret succeeded");
                } catch (AwsServiceException e) {
                    Map<String, Object> refused = new LinkedHashMap<>();
                    refused.put("code", e.awsErrorDetails().errorCode());
                    refused.put("message", e.awsErrorDetails().errorMessage());
                    refused.put("status", e.statusCode());
                    refused.put("exception", e.getClass().getSimpleName());
                    res.put("refused", refused);
                }
            }
        } catch (Exception e) {
            System.err.println("error: " + e);
            e.printStackTrace(System.err);
            return 1;
        }
        System.out.println(AdminApis.json(res));
        System.out.flush();
        return 0;
    }

    // one attempt: a refusal must come back as the broker gave it, not after retries
    private static StsClient sts(SdkHttpClient http, URI endpoint, Region region, String key, String secret,
                                 String token) {
        AwsCredentials c = token == null || token.isEmpty() ? AwsBasicCredentials.create(key, secret)
                : AwsSessionCredentials.create(key, secret, token);
        return StsClient.builder().endpointOverride(endpoint).region(region).httpClient(http)
                .credentialsProvider(StaticCredentialsProvider.create(c))
                .overrideConfiguration(b -> b.retryStrategy(AwsRetryStrategy.doNotRetry())).build();
    }
}
