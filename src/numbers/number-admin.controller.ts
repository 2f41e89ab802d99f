import { Body, Controller, Delete, Get, Param, Patch, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { NumberAdminService, NumberFormatDetail, NumberFormatView } from './number-admin.service';
import { parseCreateFormat, parseNumberKey, parsePatchFormat } from './numbers.input';

/** `/admin/numbers`: formats of business numbers (Bearer ADMIN_TOKEN). */
@Controller('admin/numbers')
@UseGuards(AdminTokenGuard)
export class NumberAdminController {
  constructor(private readonly service: NumberAdminService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a number format (idempotent)',
    description:
      'Body {key, pattern, reset?, step?, description?, allowTextOverlap?}. pattern: literal text (A-Z a-z 0-9 _ . : / # @ + -), date parts ' +
      '{yyyy} {yy} {MM} {dd} {HH} (or a run of them: {yyyyMMdd}) and exactly one {seq:N} (1..18 decimal digits) or ' +
      '{seq36:N} (1..12 upper-case base-36 digits) or {seq62:N} (1..10 base-62 digits, case-sensitive). reset: none ' +
      '(default), daily, monthly or yearly, by the database clock; the ' +
      'pattern must print the date parts that tell the periods apart. step: sequences one allocation takes (1..100000, ' +
      'default 100). The same definition again answers 200; another one for an existing key 409. A deleted key comes ' +
      'back only with its old pattern and reset (409 otherwise) and continues above its old sequences. A pattern that ' +
      'can print text a live or deleted format of another key can print answers 409 NUMBER_TEXT_OVERLAP (-302) unless ' +
      'the body has "allowTextOverlap": true.',
  })
  async create(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<NumberFormatView> {
    const { created, format } = await this.service.create(parseCreateFormat(body));
    reply.status(created ? 201 : 200);
    return format;
  }

  @Get()
  async list(): Promise<{ formats: NumberFormatView[] }> {
    return { formats: await this.service.list() };
  }

  @Get(':key')
  get(@Param('key') key: string): Promise<NumberFormatDetail> {
    return this.service.get(parseNumberKey('key', key));
  }

  @Patch(':key')
  @ApiOperation({ summary: 'Change the step or description of a number format (never its pattern or reset)' })
  update(@Param('key') key: string, @Body() body: unknown): Promise<NumberFormatView> {
    const parsed = parseNumberKey('key', key);
    return this.service.update(parsed, parsePatchFormat(body));
  }

  @Delete(':key')
  @ApiOperation({
    summary: 'Delete a number format',
    description: 'Its sequences and a tombstone stay: created again with the same pattern and reset, it continues above them.',
  })
  remove(@Param('key') key: string): Promise<{ key: string; deleted: true }> {
    return this.service.remove(parseNumberKey('key', key));
  }
}
