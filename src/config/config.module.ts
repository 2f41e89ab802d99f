import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';
import { SECTION_TOKENS, sectionProviders } from './config-tokens';

export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Makes the validated configuration injectable everywhere: one token per section
 * (config-tokens.ts) for the classes that use it, and the whole AppConfig as APP_CONFIG for the
 * composition root.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }, ...sectionProviders(config)],
      exports: [APP_CONFIG, ...SECTION_TOKENS],
    };
  }
}
