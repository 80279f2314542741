/* mskmock(1), written from the key table (manpage.h). */
#include "manpage.h"

#include <string.h>

#include "config.h"

/* roff treats a leading '.' or '\'' as a request and '\\' as an escape */
static void text(FILE *f, const char *s) {
    if (*s == '.' || *s == '\'') fputs("\\&", f);
    for (; *s; s++) {
        if (*s == '\\') fputs("\\e", f);
        else if (*s == '-') fputs("\\-", f);
        else fputc(*s, f);
    }
}

void manpage_write(FILE *f, const char *revision) {
    fprintf(f, ".TH MSKMOCK 1 \"\" \"mskmock %s (%s)\" \"User Commands\"\n", MSKMOCK_VERSION, revision);
    fputs(".SH NAME\nmskmock \\- a local AWS MSK Serverless broker\n"
          ".SH SYNOPSIS\n.B mskmock\n[\\fB\\-\\-config\\fR \\fIFILE\\fR] [\\fB\\-\\-data\\-dir\\fR \\fIDIR\\fR] "
          "[\\fB\\-\\-profile\\fR \\fINAME\\fR] [\\fB\\-\\-log\\-level\\fR \\fILEVEL\\fR] "
          "[\\fB\\-\\-set\\fR \\fIKEY\\fR=\\fIVALUE\\fR]...\n.br\n"
          ".B mskmock \\-\\-probe\n[\\fIoptions as above\\fR]\n.br\n"
          ".B mskmock \\-\\-salvage\n\\fIDAMAGED.db\\fR [\\fIoptions as above\\fR]\n.br\n"
          ".B mskmock \\-\\-rebuild\\-index\n[\\fIoptions as above\\fR]\n.br\n"
          ".B mskmock\n\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR | \\fB\\-\\-man\\fR\n"
          ".br\n.B mskmock\n\\fBtopic\\fR|\\fBproduce\\fR|\\fBconsume\\fR|\\fBgroup\\fR ... (the Kafka client; "
          "\\fBmskmock\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR)\n"
          ".SH DESCRIPTION\n"
          "mskmock speaks the Kafka wire protocol to unmodified Kafka clients and behaves like Amazon MSK "
          "Serverless where MSK differs from Apache Kafka: strict decoding of consumer-group metadata, IAM "
          "authentication (AWS_MSK_IAM and OAUTHBEARER with SigV4 verification) and authorization, "
          "credential rotation, and the topic configurations MSK allows. Several synthetic brokers run in one "
          "process; everything is kept in one SQLite database in the data directory. The log says why any "
          "request was refused.\n"
          ".SH OPTIONS\n"
          ".TP\n\\fB\\-\\-config\\fR \\fIFILE\\fR\nRead keys from a properties file (key=value lines, # comments).\n"
          ".TP\n\\fB\\-\\-set\\fR \\fIKEY\\fR=\\fIVALUE\\fR\nSet one key; wins over the file and the environment.\n"
          ".TP\n\\fB\\-\\-data\\-dir\\fR \\fIDIR\\fR, \\fB\\-\\-profile\\fR \\fINAME\\fR, \\fB\\-\\-log\\-level\\fR "
          "\\fILEVEL\\fR\nThe keys data.dir, profile and log.level.\n"
          ".TP\n\\fB\\-\\-probe\\fR\nHealth check: with ready.file set, the file must exist and each kind of listener "
          "of the first broker must answer ApiVersions (over TLS on the IAM listeners); without it, every "
          "listener the configuration names. Exit 0 if all answered within two seconds each, 1 otherwise. "
          "Container images use it as their HEALTHCHECK.\n"
          ".TP\n\\fB\\-\\-salvage\\fR \\fIDAMAGED.db\\fR\nCopy what is readable of a damaged database into a new "
          "mskmock.db in the data directory (which must not hold one), then exit. A topic whose row was lost "
          "gets one again (its old name when the index on topic names still has it, else "
          "recovered\\-topic\\-\\fIID\\fR), and partitions whose index rows were lost are rebuilt from their "
          "segment files; the report has a line per partition rebuilt.\n"
          ".TP\n\\fB\\-\\-rebuild\\-index\\fR\nWith the broker stopped: move the data directory's mskmock.db aside "
          "(mskmock.db.before\\-rebuild\\-\\fITIME\\fR, never deleted) and salvage it back with every partition's "
          "index (batch and segment rows, log start, transaction index) rebuilt from its segment files, then exit.\n"
          ".TP\n\\fB\\-\\-help\\fR, \\fB\\-\\-version\\fR, \\fB\\-\\-man\\fR\nUsage with every key; the version "
          "and git revision; this page.\n"
          ".SH CLIENT COMMANDS\n"
          "With a command as its first argument mskmock is a Kafka client for any broker (mskmock, Apache Kafka, "
          "MSK) instead: \\fBtopic create|list|describe|delete\\fR, \\fBproduce\\fR \\fITOPIC\\fR (stdin "
          "lines as records), \\fBconsume\\fR \\fITOPIC\\fR [\\fB\\-g\\fR \\fIGROUP\\fR] (as a consumer-group "
          "member committing what it printed), \\fBgroup list|describe|seek|delete\\fR (members, assignments, "
          "committed offsets and lag; seek moves the offsets of a group without members). Common flags: "
          "\\fB\\-b\\fR \\fIHOST:PORT\\fR, \\fB\\-\\-security\\-protocol\\fR, \\fB\\-\\-tls\\fR, "
          "\\fB\\-\\-ca\\-file\\fR \\fIPEM\\fR, \\fB\\-\\-sasl\\-mechanism\\fR AWS_MSK_IAM|OAUTHBEARER "
          "(credentials from the environment, the shared AWS files or the container endpoint), "
          "\\fB\\-\\-region\\fR. Exit 0, 1 when the command failed (with the broker's error), 2 for bad usage.\n"
          ".SH CONFIGURATION\n"
          "Keys apply in this order, later ones winning: the profile's defaults, the file given with "
          "\\fB\\-\\-config\\fR, environment variables, \\fB\\-\\-set\\fR. A profile only chooses defaults; "
          "where a key's default differs between profiles, all three are given.\n",
          f);
    for (size_t i = 0; i < cfg_key_count(); i++) {
        cfg_key_info k = cfg_key_at(i);
        fputs(".TP\n.B ", f);
        text(f, k.name);
        fputs("\n", f);
        text(f, k.doc);
        fputs(".\n.br\nDefault: ", f);
        if (!strcmp(k.dflt[0], k.dflt[1]) && !strcmp(k.dflt[0], k.dflt[2]))
            text(f, *k.dflt[0] ? k.dflt[0] : "(empty)");
        else
            for (int p = 0; p < 3; p++) {
                fprintf(f, "%s%s ", p ? ", " : "", cfg_profile_name((cfg_profile)p));
                text(f, *k.dflt[p] ? k.dflt[p] : "(empty)");
            }
        fputs("\n", f);
    }
    fputs(".SH ENVIRONMENT\n"
          "Every key can be set as \\fBMSKMOCK_\\fR\\fIKEY\\fR, upper case with dots as underscores "
          "(\\fBMSKMOCK_PLAINTEXT_PORT\\fR=19092).\n"
          ".SH FILES\n"
          ".TP\n\\fIDATA_DIR\\fR/mskmock.db\nTopics, records, groups, offsets and producer state (SQLite).\n"
          ".TP\n\\fIDATA_DIR\\fR/tls/ca.pem\nThe local CA that signs the generated server certificate of the IAM "
          "listeners; clients trust it.\n"
          ".SH SIGNALS\n"
          "SIGTERM and SIGINT stop the broker cleanly (exit 0). SIGHUP reads the IAM policies of "
          "iam.identities.file again. Running as PID 1 (in a container) mskmock also reaps orphaned children.\n"
          ".SH EXIT STATUS\n"
          "0 after a clean stop; 1 when \\fB\\-\\-probe\\fR, \\fB\\-\\-salvage\\fR or \\fB\\-\\-rebuild\\-index\\fR failed; 2 for a bad argument, "
          "key or value, or a listener or database that cannot be opened; 3 when storage failed in a way that "
          "only a restart can recover from.\n"
          ".SH SEE ALSO\nREADME.md and docs/ in the source tree; conf/mskmock.properties documents every key "
          "with examples.\n",
          f);
}
