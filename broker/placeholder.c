/* placeholder until the broker core lands */
int brokercore_placeholder_;
