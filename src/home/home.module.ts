import { Module } from '@nestjs/common';
import { HomeController } from './home.controller';

/** `GET /`: where to go next. */
@Module({ controllers: [HomeController] })
export class HomeModule {}
