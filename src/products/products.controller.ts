import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminApi } from '../common/auth/admin-api.decorator';
import { Actor, CurrentActor } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { CreateProductDto, ProductDto, UpdateProductDto } from './dto/product.dto';
import { ProductsService } from './products.service';

@ApiTags('admin: products')
@AdminApi()
@Controller('api/v1/admin/products')
export class ProductsController {
  constructor(private readonly products: ProductsService) {}

  @Get()
  @ApiOperation({ summary: 'List all products', description: 'Active and inactive, in id order.' })
  @ApiOkResponse({ type: [ProductDto] })
  async list(): Promise<ProductDto[]> {
    return (await this.products.listProducts()).map(ProductDto.from);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get one product', description: 'With its default limits and available features.' })
  @ApiOkResponse({ type: ProductDto })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: no product with this id', type: ErrorResponseDto })
  async get(@Param('id', IdParamPipe) id: number): Promise<ProductDto> {
    return ProductDto.from(await this.products.getProduct(id));
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a product',
    description: 'code and key_prefix are unique; key_prefix starts every licence key of the product.',
  })
  @ApiCreatedResponse({ type: ProductDto })
  @ApiConflictResponse({ description: 'Duplicate code or key_prefix', type: ErrorResponseDto })
  async create(@Body() body: CreateProductDto, @CurrentActor() actor: Actor): Promise<ProductDto> {
    return ProductDto.from(await this.products.createProduct(body, actor));
  }

  @Put(':id')
  @ApiOperation({ summary: 'Change a product (partial)', description: 'Only the fields sent change; existing licences keep their keys.' })
  @ApiOkResponse({ type: ProductDto })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: no product with this id', type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'Duplicate code or key_prefix', type: ErrorResponseDto })
  async update(@Param('id', IdParamPipe) id: number, @Body() body: UpdateProductDto, @CurrentActor() actor: Actor): Promise<ProductDto> {
    return ProductDto.from(await this.products.updateProduct(id, body, actor));
  }
}
