import { DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { ChronicleConfig } from './chronicle-config';
import { parseConfig } from './parse-config';

/**
 * Validates the environment with @nestjs/config (start-up stops on a bad variable) and provides
 * the typed `ChronicleConfig`. Tests pass a ready config instead of reading the environment.
 */
@Global()
@Module({})
export class ChronicleConfigModule {
  static forRoot(config?: ChronicleConfig): DynamicModule {
    const configModule = config
      ? ConfigModule.forRoot({
          ignoreEnvFile: true,
          ignoreEnvVars: true,
          load: [() => ({ chronicle: config })],
        })
      : ConfigModule.forRoot({ ignoreEnvFile: true, validate: (env) => ({ chronicle: parseConfig(env) }) });
    return {
      module: ChronicleConfigModule,
      imports: [configModule],
      providers: [
        {
          provide: ChronicleConfig,
          useFactory: (configService: ConfigService) =>
            configService.getOrThrow<ChronicleConfig>('chronicle'),
          inject: [ConfigService],
        },
      ],
      exports: [ChronicleConfig],
    };
  }
}
