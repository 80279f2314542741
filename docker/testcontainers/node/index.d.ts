// Types for index.js (the module itself is plain JavaScript).
import { AbstractStartedContainer, GenericContainer, StartedTestContainer } from 'testcontainers'

export declare const DEFAULT_IMAGE: string
export declare const PLAINTEXT_PORT: number
export declare const IAM_PORT: number
export declare const ADMIN_PORT: number
export declare const CREDENTIALS_PORT: number
export declare const MAX_BROKERS: number
export declare const ROLE: string
export declare function configEnvName(key: string): string

export declare class MskMockContainer extends GenericContainer {
  constructor(image?: string)
  withBrokerCount(n: number): this
  withProfile(profile: 'serverless' | 'provisioned' | 'kafka'): this
  withConfig(key: string, value: string | number | boolean): this
  start(): Promise<StartedMskMockContainer>
}

export declare class StartedMskMockContainer extends AbstractStartedContainer {
  constructor(started: StartedTestContainer, details: object)
  getBootstrapServers(): string
  getIamBootstrapServers(): string
  getAdminUrl(): string
  getCaPem(): string
  getRegion(): string
  getAccessKeyId(): string
  getSecretAccessKey(): string
  getCredentialsUri(): string
}
